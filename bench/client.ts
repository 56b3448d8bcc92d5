// queen-serverless-client: its size in a user's bundle, and consume's throughput beside a
// hand-written pop/ack loop at batch 100, against one `npm start` server in the same run.
//   npx tsx bench/client.ts          (BENCH_MESSAGES=30000 per drain, BENCH_ROUNDS=5; ~2 minutes)
// Each drain reads the same pushed messages under a consumer group of its own, so the ways compare
// on identical data, interleaved round by round.
// Creates and drops its own database on BENCH_DATABASE_URL (default the shared PostgreSQL).
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { Queen } from 'queen-serverless-client';
import { connect } from '../lib/db/client.js';
import { migrate } from '../lib/db/migrate.js';
import { fmt } from './lib/load.js';
import { SERVER_DIR, startServer } from './lib/server.js';

const ADMIN = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 30_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCH = 100;

/** Minified ESM, gzipped at level 9: what a user's bundler ships for `entry`. */
async function bundleBytes(entry: string): Promise<{ min: number; gzip: number }> {
  const out = await build({
    stdin: { contents: entry, resolveDir: SERVER_DIR, sourcefile: 'user.mjs' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.contents;
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
}

const BUNDLES: [string, string][] = [
  [
    'push+pop+ack+consume',
    "import { Queen } from 'queen-serverless-client'; const q = new Queen({ url: '/' }); export const use = [q.push, q.pop, q.ack, q.consume];",
  ],
  ['verifyDelivery+deliveryHandler', "export { verifyDelivery, deliveryHandler } from 'queen-serverless-client';"],
  ['everything exported', "export * from 'queen-serverless-client';"],
];

console.log('## bundle size (esbuild, minified, ESM, gzip -9)\n');
console.log('| import | minified | gzipped | target |');
console.log('| --- | --- | --- | --- |');
for (const [name, entry] of BUNDLES) {
  const { min, gzip } = await bundleBytes(entry);
  const target = name.startsWith('push') ? `<= 6 KiB: ${gzip <= 6 * 1024 ? 'PASS' : 'MISS'}` : '';
  console.log(`| ${name} | ${(min / 1024).toFixed(2)} KiB | ${(gzip / 1024).toFixed(2)} KiB | ${target} |`);
}

const dbName = `queen_bench_client_${process.pid}`;
const admin = await connect({ url: ADMIN, driver: 'pg', max: 1 });
await admin.query(`CREATE DATABASE ${dbName}`);
const url = Object.assign(new URL(ADMIN), { pathname: `/${dbName}` }).toString();
const db = await connect({ url, driver: 'pg', max: 1 });
await migrate(db);
await db.close();
const server = await startServer({ databaseUrl: url, port: 7290 + (process.pid % 10) });
const base = server.base.toString().replace(/\/$/, '');
const queen = new Queen({ url: base });

async function fill(queue: string, partitions: number) {
  for (let start = 0; start < MESSAGES; start += 1000) {
    const items = Array.from({ length: 1000 }, (_, i) => ({
      data: { id: start + i, amount: 42.5 },
      partition: `p${(start + i) % partitions}`,
    }));
    await queen.push(queue, items);
  }
}

/** The loop docs/clients.md#plain-http describes, by transactionId or with the offsets pop gave. */
async function handWritten(queue: string, group: string, loops: number, withOffsets: boolean): Promise<void> {
  let done = 0;
  const headers = { 'content-type': 'application/json' };
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (done < MESSAGES) {
        const res = await fetch(`${base}/api/v1/pop/queue/${queue}?batch=${BATCH}&wait=true&timeout=1000&consumerGroup=${group}`);
        if (res.status === 204) continue;
        const popped = await res.json();
        for (const m of popped.messages) handle(m);
        const acknowledgments = popped.messages.map((m: { transactionId: string; partitionId: string; offset: number }) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: popped.leaseId,
          status: 'completed',
          ...(withOffsets ? { offset: m.offset } : {}),
        }));
        const acked = await (
          await fetch(`${base}/api/v1/ack/batch`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ consumerGroup: group, acknowledgments }),
          })
        ).json();
        if (acked.some((r: { success: boolean }) => !r.success)) throw new Error('ack refused');
        done += popped.messages.length;
      }
    }),
  );
}

async function consumed(queue: string, group: string, loops: number): Promise<void> {
  let done = 0;
  const stop = new AbortController();
  await queen.consume(queue, (m) => (handle(m), ++done === MESSAGES && stop.abort()), {
    group,
    batch: BATCH,
    concurrency: loops,
    waitMs: 1000,
    signal: stop.signal,
  });
}

let sink = 0;
const handle = (m: { data: unknown }) => void (sink += (m.data as { id: number }).id);

const WAYS = {
  'hand-written, by transactionId': (q: string, g: string, n: number) => handWritten(q, g, n, false),
  'hand-written, with offsets': (q: string, g: string, n: number) => handWritten(q, g, n, true),
  consume: consumed,
};
type Way = keyof typeof WAYS;

console.log(
  `\n## drain ${fmt(MESSAGES)} messages at batch ${BATCH}: best msgs/s of ${ROUNDS} rounds, and this process's CPU per message (the client's own cost)\n`,
);
console.log(
  '| loops x partitions | hand-written, by transactionId | hand-written, with offsets | consume | consume / best hand-written | target |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const loops of [1, 4]) {
  const queue = `bench-client-${loops}`;
  await fill(queue, loops);
  const best = { 'hand-written, by transactionId': 0, 'hand-written, with offsets': 0, consume: 0 } as Record<Way, number>;
  const cpu = { 'hand-written, by transactionId': Infinity, 'hand-written, with offsets': Infinity, consume: Infinity } as Record<
    Way,
    number
  >;
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of Object.keys(WAYS) as Way[]) {
      const group = `g${round}-${way.replace(/\W+/g, '-')}`;
      const started = performance.now();
      const usage = process.cpuUsage();
      await WAYS[way](queue, group, loops);
      const used = process.cpuUsage(usage);
      best[way] = Math.max(best[way], MESSAGES / ((performance.now() - started) / 1000));
      cpu[way] = Math.min(cpu[way], (used.user + used.system) / MESSAGES);
    }
  }
  const hand = Math.max(best['hand-written, by transactionId'], best['hand-written, with offsets']);
  const ratio = best.consume / hand;
  const cell = (w: Way) => `${fmt(best[w])} msgs/s (${cpu[w].toFixed(1)} µs CPU)`;
  console.log(
    `| ${loops} x ${loops} | ${cell('hand-written, by transactionId')} | ${cell('hand-written, with offsets')} | ${cell('consume')} | ${ratio.toFixed(2)}x | >= 0.9x: ${ratio >= 0.9 ? 'PASS' : 'MISS'} |`,
  );
}

await server.stop();
await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await admin.close();
if (sink < 0) console.log(sink);
