// The floor under "server CPU per message": what a Node server costs at batch 100 before any broker
// work, under the same load generator and /proc reading as targets.ts. Servers that only move the
// wire-sized bodies: a push (parse the body, answer 100 results) over node:http and over hono,
// the same plus one node-postgres query with push-sized parameters, and a pop+ack pair (a query
// returning a 3 KB blob and a 100-message answer; 100 acks parsed, a query, 100 results).
//   npx tsx bench/floor.ts            (about 1 minute)
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { groupCpuSeconds } from './lib/cpu.js';
import { request } from '../support/http.js';
import { drive, median } from './lib/load.js';
import { startCluster } from './lib/postgres.js';
import { pushBody } from './lib/queen.js';

const KINDS = ['push over node:http', 'push over hono', 'push over node:http + 1 query', 'pop+ack over node:http + 2 queries'];
const PORT = 7220;
const uuids = (n: number) => Array.from({ length: n }, () => randomUUID());
const pushResults = JSON.stringify(
  uuids(100).map((id, i) => ({
    index: i,
    status: 'queued',
    transaction_id: id,
    message_id: randomUUID(),
    partition_id: '12',
    trace_id: null,
    queueName: 'bench',
    offset: 1000 + i,
  })),
);
const ackResults = JSON.stringify(
  uuids(100).map((id, i) => ({
    index: i,
    transactionId: id,
    success: true,
    error: null,
    queueName: 'bench',
    partitionName: 'p1',
    leaseReleased: i === 99,
    dlq: false,
    committed: true,
    offset: i,
  })),
);
const popBody = JSON.stringify({
  success: true,
  queue: 'bench',
  partition: 'p1',
  partitionId: '12',
  leaseId: randomUUID(),
  consumerGroup: '__QUEUE_MODE__',
  partitionsClaimed: 1,
  messages: uuids(100).map((id, i) => ({
    id,
    transactionId: randomUUID(),
    traceId: null,
    data: {
      orderId: `O-${i}`,
      customer: 'cust-1',
      amount: 1.5,
      currency: 'EUR',
      items: [{ sku: 'SKU-1', qty: 2 }],
      note: 'benchmark payload of about two hundred bytes',
    },
    producerSub: null,
    createdAt: new Date().toISOString(),
    partitionId: '12',
    partition: 'p1',
    queue: 'bench',
    leaseId: randomUUID(),
    consumerGroup: '__QUEUE_MODE__',
    offset: i,
    attempt: 1,
  })),
});

async function serve(kind: number, port: number, pgUrl: string) {
  if (kind === 1) {
    const [{ Hono }, { serve: listen }] = await Promise.all([import('hono'), import('@hono/node-server')]);
    const app = new Hono();
    app.post(
      '/api/v1/push',
      async (c) => (JSON.parse(await c.req.text()), c.body(pushResults, 201, { 'content-type': 'application/json' })),
    );
    listen({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => console.log('listening on'));
    return;
  }
  const pool = kind >= 2 ? new (await import('pg')).default.Pool({ connectionString: pgUrl, max: 10 }) : null;
  const blob = Buffer.alloc(3000, 7);
  const send = (res: http.ServerResponse, status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  http
    .createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', async () => {
        if (req.method === 'GET') {
          await pool!.query('SELECT $1::bytea AS blob, 1::bigint AS a, 2::bigint AS b, now() AS t', [blob]);
          return send(res, 200, popBody);
        }
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { items?: unknown[]; acknowledgments?: unknown[] };
        if (body.acknowledgments) {
          await pool!.query('SELECT length($1::bytea) AS n, $2::int[] AS k', [
            Buffer.alloc(1600, 1),
            body.acknowledgments.map((_, i) => i),
          ]);
          return send(res, 200, ackResults);
        }
        if (pool) {
          await pool.query(
            'SELECT length($6::bytea) + length($7::bytea) AS n, $1::text, $2::text[], $3::text[], $4::int[], $5::int[], $8::boolean[], $9::boolean[], $10::int[], $11::int[]',
            [
              'default',
              ['bench'],
              ['p1'],
              [100],
              [3000],
              blob,
              Buffer.alloc(1600, 9),
              [false],
              [false],
              Array(100).fill(0),
              Array.from({ length: 100 }, (_, i) => i),
            ],
          );
        }
        send(res, 201, pushResults);
      });
    })
    .listen(port, '127.0.0.1', () => console.log('listening on'));
}

async function popAckCycle(base: URL): Promise<number> {
  const popped = JSON.parse((await request(base, 'GET', '/api/v1/pop/queue/bench?batch=100')).text) as {
    leaseId: string;
    messages: { transactionId: string; partitionId: string }[];
  };
  const acks = popped.messages.map((m) => ({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    status: 'completed',
    error: null,
    leaseId: popped.leaseId,
  }));
  JSON.parse((await request(base, 'POST', '/api/v1/ack/batch', JSON.stringify({ acknowledgments: acks, consumerGroup: null }))).text);
  return 100;
}

async function main() {
  const cluster = startCluster({ port: 7251 });
  const children = KINDS.map((_, k) =>
    spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', String(k), String(PORT + k), cluster.url('postgres')],
      { detached: true, stdio: ['ignore', 'pipe', 'inherit'] },
    ),
  );
  try {
    await Promise.all(
      children.map((c) => new Promise<void>((ok) => c.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && ok()))),
    );
    const perMsg: number[][] = KINDS.map(() => []);
    for (let round = 0; round < 5; round++) {
      for (let k = 0; k < KINDS.length; k++) {
        const base = new URL(`http://127.0.0.1:${PORT + k}`);
        const body = pushBody('bench', () => 'p1', 100);
        const cycle =
          k === 3 ? () => popAckCycle(base) : async () => ((await request(base, 'POST', '/api/v1/push', body)).status === 201 ? 100 : 0);
        const before = groupCpuSeconds(children[k]!.pid!);
        const cell = await drive(4, 2, cycle);
        perMsg[k]!.push(((groupCpuSeconds(children[k]!.pid!) - before) * 1e6) / cell.msgs);
      }
    }
    console.log('server CPU per message at batch 100, 4 clients, median of 5 alternating 2 s windows [min..max]:');
    KINDS.forEach((name, k) => {
      const xs = perMsg[k]!.sort((a, b) => a - b);
      console.log(`  ${median(xs).toFixed(2).padStart(6)} µs  [${xs[0]!.toFixed(1)}..${xs.at(-1)!.toFixed(1)}]  ${name}`);
    });
  } finally {
    for (const c of children) process.kill(-c.pid!, 'SIGKILL');
    cluster.stop();
  }
}

if (process.argv[2] === '--serve') await serve(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!);
else await main();
