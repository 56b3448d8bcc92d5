// Push delivery under `npm start` on a private PostgreSQL, against a receiver in this process that
// answers 200 at once:
// - latency from a push's answer to the endpoint receiving it, one message at a time (p50, p99);
// - throughput of one subscription (batchSize 100, 16 partitions) draining a backlog, beside pop +
//   ack by 4 HTTP consumers draining the same backlog in the same run (the consumers of bench/lib/workload.ts);
// - server and PostgreSQL CPU per message delivered (and per message popped and acked), from /proc.
//   npx tsx bench/delivery.ts        (BENCH_LATENCY_N=300 pushes, BENCH_BACKLOG=40000 messages, ~2 minutes)
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { drive, fmt, pct } from './lib/load.js';
import { Meter, perMsg, type Usage } from './lib/meter.js';
import { call as callOnce } from '../support/http.js';
import { startCluster, withClient } from './lib/postgres.js';
import { pushBody } from './lib/queen.js';
import { startServer } from './lib/server.js';
import { CLIENTS, fill, popCycle } from './lib/workload.js';

const PG_PORT = 7260;
const SERVER_PORT = 7216;
const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 300);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 40_000);

const cluster = startCluster({ port: PG_PORT });
process.once('exit', () => cluster.stop());
const url = cluster.url('bench');
await withClient(cluster.url('postgres'), (c) => c.query('CREATE DATABASE bench'));
const server = await startServer({ databaseUrl: url, port: SERVER_PORT, env: { QUEEN_DELIVERY_ALLOW_PRIVATE: '1' } });
process.once('exit', () => {
  try {
    process.kill(-server.pid, 'SIGKILL');
  } catch {
    // already stopped
  }
});
const base = server.base;
// A keep-alive socket the server closed while idle (between phases) resets once: send again.
const call: typeof callOnce = (...args) =>
  callOnce(...args).catch((err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? callOnce(...args) : Promise.reject(err)));
const meter = new Meter(server.pid, cluster.postmasterPid());

// The endpoint: counts messages per queue, and wakes whoever waits for a transactionId.
const delivered = new Map<string, number>();
const waiting = new Map<string, (at: number) => void>();
let firstAt = 0;
let lastAt = 0;
const receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    res.writeHead(200).end();
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { queue: string; messages: { transactionId: string }[] };
    delivered.set(body.queue, (delivered.get(body.queue) ?? 0) + body.messages.length);
    if (firstAt === 0) firstAt = at;
    lastAt = at;
    for (const m of body.messages) waiting.get(m.transactionId)?.(at);
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const subscribe = (queue: string, options: Record<string, number> = {}) =>
  call(base, 'POST', '/api/v1/subscriptions', JSON.stringify({ queue, name: `${queue}-hook`, url: hook, options }), [201]);
const line = (label: string, rate: number, cpu: Usage, msgs: number) =>
  `${label.padEnd(34)} ${fmt(rate).padStart(8)} msgs/s   server ${fmt(perMsg(cpu.server, msgs)).padStart(6)} µs/msg   PostgreSQL ${fmt(perMsg(cpu.postgres, msgs)).padStart(6)} µs/msg`;

console.log(`push delivery under npm start, PostgreSQL 15 (private cluster), node ${process.version}`);

// 1. Latency: one message at a time, from the push's answer to its arrival at the endpoint.
await subscribe('lat');
const latencies: number[] = [];
for (let i = 0; i < LATENCY_N + 20; i++) {
  const id = `lat-${i}`;
  const arrived = new Promise<number>((resolve) => waiting.set(id, resolve));
  await call(
    base,
    'POST',
    '/api/v1/push',
    JSON.stringify({ items: [{ queue: 'lat', partition: `p${i % 16}`, payload: { i }, transactionId: id }] }),
    [201],
  );
  const answered = performance.now();
  const at = await arrived;
  waiting.delete(id);
  // The first 20 warm the connections and the cache of subscribed queues.
  if (i >= 20) latencies.push(at - answered);
}
console.log(
  `latency, push answered → endpoint received, ${LATENCY_N} single pushes: p50 ${pct(latencies, 50).toFixed(2)} ms  p99 ${pct(latencies, 99).toFixed(2)} ms  (target p50 <= 20 ms)`,
);

// 2. Throughput on equal backlogs over 16 partitions: pop + ack by 4 consumers, then one subscription.
await fill(base, 'consume', BACKLOG);
await fill(base, 'thr', BACKLOG);
const popWindow = await meter.window(() => drive(CLIENTS, 600, popCycle(base, 'consume'), 20));
const popRate = popWindow.out.msgs / popWindow.out.seconds;
console.log(line(`pop + ack, ${CLIENTS} HTTP consumers, batch 100`, popRate, popWindow.cpu, popWindow.out.msgs));

firstAt = 0;
const deliverWindow = await meter.window(async () => {
  await subscribe('thr', { batchSize: 100, maxInFlight: 16 });
  const deadline = performance.now() + 300_000;
  while ((delivered.get('thr') ?? 0) < BACKLOG && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
});
const got = delivered.get('thr') ?? 0;
const deliverRate = got / ((lastAt - firstAt) / 1000);
console.log(line('delivery, 1 subscription, batch 100', deliverRate, deliverWindow.cpu, got));
console.log(`delivery / pop+ack throughput: ${(deliverRate / popRate).toFixed(2)}x  (target >= 0.5x)`);
if (got < BACKLOG) console.log(`only ${got} of ${BACKLOG} messages arrived within 300 s`);

// 3. The same while producers keep pushing: deliveries started by the pushes themselves.
firstAt = 0;
await subscribe('live', { batchSize: 100, maxInFlight: 16 });
const liveWindow = await meter.window(async () => {
  const pushed = await drive(CLIENTS, 8, async (c, seq) => {
    await call(
      base,
      'POST',
      '/api/v1/push',
      pushBody('live', () => `p${(c + CLIENTS * seq) % 16}`, 100),
      [201],
    );
    return 100;
  });
  const deadline = performance.now() + 60_000;
  while ((delivered.get('live') ?? 0) < pushed.msgs && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return pushed;
});
const liveGot = delivered.get('live') ?? 0;
console.log(
  `pushing (4 clients x batch 100) while delivering: pushed ${fmt(liveWindow.out.msgs / liveWindow.out.seconds)} msgs/s, delivered ${liveGot} of ${liveWindow.out.msgs}, last arrival ${((lastAt - firstAt) / 1000).toFixed(1)} s after the first`,
);

await server.stop();
receiver.close();
process.exit(0);
