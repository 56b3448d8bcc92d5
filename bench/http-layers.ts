// What each layer of the HTTP stack costs a single-message push on Node, in server CPU per request
// (/proc, the server's process group): servers that add one layer at a time, from node:http to
// the whole app over a database stub that answers push_segments at once (so the broker's own work,
// hashing, framing, zstd, is in the last step but no PostgreSQL is). 16 keep-alive clients,
// alternating 2 s windows, median of BENCH_ROUNDS (5).
//   npx tsx bench/http-layers.ts             (about 1 minute)
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { groupCpuSeconds } from './lib/cpu.js';
import { request } from '../support/http.js';
import { drive, median } from './lib/load.js';

const KINDS = [
  'node:http: read the body, JSON.parse, answer',
  'hono on @hono/node-server: c.req.text(), c.json()',
  '+ body from env.incoming, answer with plain headers (respond.ts)',
  '+ hono/cors middleware (origin *), as before CORS went off by default',
  '+ the old per-request middleware (c.header before the handler, 3 c.set)',
  '+ the per-request middleware now, and requireRole',
  'the whole app (buildApp), database stubbed: push parsing and broker work',
];
const PORT = 7240;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BODY = JSON.stringify({ items: [{ queue: 'bench', partition: '7', payload: { message: 'Hello World', partition_id: 7 } }] });
const ANSWER = JSON.stringify([
  {
    index: 0,
    status: 'queued',
    transaction_id: '0193a0c4-0000-7000-8000-000000000000',
    message_id: '0193a0c4-0000-7000-8000-000000000000',
    partition_id: '12',
    trace_id: null,
    queueName: 'bench',
    offset: 1,
  },
]);

async function serve(kind: number, port: number) {
  const listening = () => console.log('listening on');
  // A clean exit on SIGTERM, so `node --cpu-prof` writes its profile (to look inside one layer).
  process.on('SIGTERM', () => process.exit(0));
  if (kind === 0) {
    http
      .createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (d: Buffer) => chunks.push(d));
        req.on('end', () => {
          JSON.parse(Buffer.concat(chunks).toString());
          res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
          res.end(ANSWER);
        });
      })
      .listen(port, '127.0.0.1', listening);
    return;
  }
  const [{ Hono }, { serve: listen }, { cors }, body, respond, context] = await Promise.all([
    import('hono'),
    import('@hono/node-server'),
    import('hono/cors'),
    import('../lib/http/requests/body.js'),
    import('../lib/http/respond.js'),
    import('../lib/http/context.js'),
  ]);
  const { readConfig } = await import('../lib/config.js');
  const config = readConfig({}, { auth: 'none' });
  if (kind === 6) {
    const [{ buildApp }, { allFunctions }] = await Promise.all([import('../lib/http/app.js'), import('../functions/index.js')]);
    let offset = 0;
    const stub = {
      driver: 'pg' as const,
      query: async (text: string) =>
        (text.includes('push_segments')
          ? [{ kind: 'ok', grp: 0, item: null, partition_id: '12', msg_offset: null, base_offset: String(offset++), blob: null }]
          : []) as any[],
      transaction: async <T>(fn: (tx: any) => Promise<T>) => fn(stub),
      close: async () => {},
    };
    listen({ fetch: buildApp(allFunctions, { config, database: () => stub }).fetch, port, hostname: '127.0.0.1' }, listening);
    return;
  }
  const app = new Hono<any>();
  if (kind === 3) app.use('*', cors({ origin: '*', allowHeaders: ['Authorization', 'Content-Type'], maxAge: 86400 }));
  const admin = { tenant: 'default', sub: null, role: 'admin' };
  if (kind === 4) {
    app.use('/api/*', async (c, next) => {
      c.header('Cache-Control', 'no-store');
      c.set('config', config);
      c.set('principal', admin);
      c.set('db', null);
      await next();
    });
  }
  if (kind === 5) {
    app.use('/api/*', async (c, next) => {
      const fast = respond.FAST_PATHS.test(c.req.path);
      if (!fast) c.header('Cache-Control', 'no-store');
      c.set('config', config);
      c.set('principal', admin);
      c.set('db', null);
      await next();
      if (fast && !respond.isAnswered(c.res)) c.header('Cache-Control', 'no-store');
    });
  }
  const handlers: any[] = kind === 5 ? [context.requireRole('read-write')] : [];
  (app.post as any)('/api/v1/push', ...handlers, async (c: any) => {
    if (kind === 1) {
      JSON.parse(await c.req.text());
      return c.json(JSON.parse(ANSWER), 201);
    }
    if (!c.get('config')) c.set('config', config);
    JSON.parse(await body.readText(c));
    return respond.jsonAnswer(ANSWER, 201);
  });
  listen({ fetch: app.fetch, port, hostname: '127.0.0.1' }, listening);
}

async function main() {
  const children = KINDS.map((_, k) =>
    spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', String(k), String(PORT + k)], {
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  try {
    await Promise.all(
      children.map((c) => new Promise<void>((ok) => c.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && ok()))),
    );
    const perReq: number[][] = KINDS.map(() => []);
    for (let round = 0; round <= ROUNDS; round++) {
      for (let k = 0; k < KINDS.length; k++) {
        const base = new URL(`http://127.0.0.1:${PORT + k}`);
        const before = groupCpuSeconds(children[k]!.pid!);
        const cell = await drive(16, 2, async () => ((await request(base, 'POST', '/api/v1/push', BODY)).status === 201 ? 1 : -1));
        // Round 0 warms the JIT and is not counted.
        if (round > 0) perReq[k]!.push(((groupCpuSeconds(children[k]!.pid!) - before) * 1e6) / cell.msgs);
      }
    }
    console.log(
      `server CPU per single-message push request, 16 clients, median of ${ROUNDS} alternating 2 s windows [min..max], and the step from the line above:`,
    );
    let prev = 0;
    KINDS.forEach((name, k) => {
      const xs = perReq[k]!.sort((a, b) => a - b);
      const m = median(xs);
      const step =
        k === 0
          ? ''
          : k === 3 || k === 4
            ? `(${m - median(perReq[2]!) >= 0 ? '+' : ''}${(m - median(perReq[2]!)).toFixed(1)} over line 3)`
            : `(${m - prev >= 0 ? '+' : ''}${(m - prev).toFixed(1)})`;
      console.log(`  ${m.toFixed(1).padStart(6)} µs  [${xs[0]!.toFixed(1)}..${xs.at(-1)!.toFixed(1)}]  ${step.padEnd(24)} ${name}`);
      if (k !== 3 && k !== 4) prev = m;
    });
  } finally {
    for (const c of children) process.kill(-c.pid!, 'SIGKILL');
  }
}

if (process.argv[2] === '--serve') await serve(Number(process.argv[3]), Number(process.argv[4]));
else await main();
