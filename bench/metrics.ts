// The dashboard's read routes and /metrics/prometheus on one queue of 10,000 partitions (5 segments
// each) read by two consumer groups: response time (median of 5) and size, per-partition series
// on and off, and the per-minute rollup the retention cron adds to each run.
// Own database on the local PostgreSQL: npx tsx bench/metrics.ts
// (BENCH_DATABASE_URL to point elsewhere; the database named in it is dropped and recreated.)
import { allFunctions } from '../functions/index.js';
import { rollupMinuteStats } from '../lib/broker/minute-stats.js';
import { readConfig } from '../lib/config.js';
import type { Database } from '../lib/db/types.js';
import { buildApp } from '../lib/http/app.js';
import { freshDatabase } from './lib/postgres.js';

const URL_ = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/queen_bench_metrics';
const PARTITIONS = 10_000;
const ROUNDS = 5;
const RUNS = 5;
const QUEUE = 'bench.wide';

const appFor = (db: Database, metricsPartitionSeries: number) =>
  buildApp(allFunctions, { config: { ...readConfig({}, { auth: 'none' }), metricsPartitionSeries }, database: () => db });

async function timed(app: ReturnType<typeof appFor>, path: string) {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const res = await app.request(path);
    const text = await res.text();
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 200)}`);
    bytes = Buffer.byteLength(text);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(RUNS / 2)]!, bytes };
}

const db = await freshDatabase(URL_);
const app = appFor(db, 1000);
for (let round = 0; round < ROUNDS; round++) {
  for (let start = 0; start < PARTITIONS; start += 1000) {
    const items = Array.from({ length: 1000 }, (_, i) => ({
      queue: QUEUE,
      partition: `p${start + i}`,
      payload: { round, order: start + i, note: 'x'.repeat(120) },
    }));
    const res = await app.request('/api/v1/push', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    if (res.status !== 201) throw new Error(`push answered ${res.status}`);
  }
}
// billing has read 2 of 5 on every partition; audit subscribed and has read nothing.
await db.query(
  `INSERT INTO queen.consumer_subscriptions (queue_id, consumer_group, mode) SELECT id, g, 'all' FROM queen.queues, unnest(ARRAY['billing', 'audit']) g`,
);
await db.query(
  `INSERT INTO queen.log_consumers (partition_id, consumer_group, committed, total_consumed) SELECT id, 'billing', 1, 2 FROM queen.log_partitions`,
);
await db.query('ANALYZE');

const t0 = performance.now();
await rollupMinuteStats(db);
const firstRollup = performance.now() - t0;
const t1 = performance.now();
await rollupMinuteStats(db);
const steadyRollup = performance.now() - t1;

console.log(
  `config: 1 queue, ${PARTITIONS} partitions x ${ROUNDS} segments of 1 message, 2 groups (20,000 positions), PostgreSQL at ${new URL(URL_).host}, in-process app.request, median of ${RUNS}`,
);
console.log(`rollup: first run ${firstRollup.toFixed(0)} ms, next run (nothing changed) ${steadyRollup.toFixed(0)} ms`);
const wide = appFor(db, 20_000);
for (const [label, target, path] of [
  ['/metrics/prometheus, per-partition series off (limit 1000)', app, '/metrics/prometheus'],
  ['/metrics/prometheus, per-partition series on (limit 20000)', wide, '/metrics/prometheus'],
  ['/metrics', app, '/metrics'],
  ['/api/v1/status', app, '/api/v1/status'],
  ['/api/v1/status/queues', app, '/api/v1/status/queues'],
  [`/api/v1/status/queues/${QUEUE}`, app, `/api/v1/status/queues/${QUEUE}`],
  ['/api/v1/analytics/queue-ops', app, '/api/v1/analytics/queue-ops'],
  ['/api/v1/analytics/worker-metrics', app, '/api/v1/analytics/worker-metrics'],
] as const) {
  const { ms, bytes } = await timed(target, path);
  console.log(`${label}: ${ms.toFixed(0)} ms, ${(bytes / 1024).toFixed(1)} KiB`);
}
await db.close();
