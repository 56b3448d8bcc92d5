// Pop + ack throughput and latency beside pg-boss 10.4.2 fetch + complete, on one fresh database in
// the same run; fan-out over consumer groups; wildcard pop cost on a 10,000-partition queue.
//   npx tsx bench/pop-ack.ts            (BENCH_SECONDS=2.5 per configuration, ~3 minutes in all)
// Needs PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); it
// creates and drops its own database. Everything goes through the HTTP app in process
// (app.request), so parsing, zstd, hashing and JSON rendering are all counted.
import { performance } from 'node:perf_hooks';
import PgBoss from 'pg-boss';
import { allFunctions } from '../functions/index.js';
import { readConfig } from '../lib/config.js';
import { connect } from '../lib/db/client.js';
import type { Database } from '../lib/db/types.js';
import { migrate } from '../lib/db/migrate.js';
import { bytesToUuid } from '../lib/codec/frame.js';
import { decodeSegment } from '../lib/codec/segment.js';
import { buildApp } from '../lib/http/app.js';
import { drive as driveFor, fmt, pct, rate, type Cell as Run } from './lib/load.js';

const ADMIN = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2.5);
const dbName = `queen_bench_${process.pid}`;
const url = Object.assign(new URL(ADMIN), { pathname: `/${dbName}` }).toString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const admin = await connect({ url: ADMIN, driver: 'pg', max: 1 });
await admin.query(`CREATE DATABASE ${dbName}`);
const db: Database = await connect({ url, driver: 'pg', max: 40 });
await migrate(db);
const app = buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => db, log: (m, e) => console.error(m, e) });

async function call(method: string, path: string, body?: unknown) {
  const res = await app.request(
    path,
    body === undefined ? { method } : { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
  );
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// Producers push per-entity runs: each request carries 10 segments of 100 messages.
async function fill(queue: string, partitions: number, total: number, run = 100) {
  const payload = { type: 'order.created', id: 0, customer: 'c-000123', amount: 42.5, items: [1, 2, 3] };
  const requests: Promise<unknown>[] = [];
  for (let start = 0; start < total; start += 1000) {
    const items = Array.from({ length: Math.min(1000, total - start) }, (_, i) => ({
      queue,
      partition: `p${Math.floor((start + i) / run) % partitions}`,
      payload: { ...payload, id: start + i },
    }));
    requests.push(call('POST', '/api/v1/push', { items }));
    if (requests.length === 4) await Promise.all(requests.splice(0));
  }
  await Promise.all(requests);
}

// `consumers` loops running `cycle` (one fetch + ack, returning messages handled) for SECONDS.
const drive = (consumers: number, cycle: () => Promise<number>): Promise<Run> => driveFor(consumers, SECONDS, cycle);

async function queenCycle(path: string, group?: string): Promise<number> {
  const { status, body } = await call('GET', path);
  if (status === 204) return 0;
  const acknowledgments = body.messages.map((m: any) => ({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    leaseId: body.leaseId,
    status: 'completed',
  }));
  await call('POST', '/api/v1/ack/batch', { consumerGroup: group, acknowledgments });
  return body.messages.length;
}

// Enough messages that no configuration drains inside the measured window.
const prefill = (batch: number, consumers: number) =>
  Math.min(300_000, Math.ceil(SECONDS * (batch === 1 ? 4_000 : batch === 10 ? 25_000 : 60_000) * (consumers > 1 ? 1.5 : 1)));

console.log(
  `pop + ack vs pg-boss 10.4.2 fetch + complete, ${SECONDS}s per configuration, PostgreSQL ${(await db.query<{ server_version: string }>('SHOW server_version'))[0]!.server_version}, node ${process.version}`,
);

const boss = new PgBoss({ connectionString: url, max: 40, supervise: false, schedule: false });
boss.on('error', (e) => console.error('pg-boss', e));
await boss.start();
async function bossRun(batch: number, consumers: number): Promise<Run> {
  const name = `boss_${batch}_${consumers}`;
  await boss.createQueue(name);
  const total = Math.ceil(prefill(batch, consumers) / 2);
  for (let i = 0; i < total; i += 5000) {
    await boss.insert(Array.from({ length: Math.min(5000, total - i) }, (_, j) => ({ name, data: { id: i + j, type: 'order.created' } })));
  }
  return drive(consumers, async () => {
    const jobs = await boss.fetch(name, { batchSize: batch });
    if (jobs.length === 0) return 0;
    await boss.complete(
      name,
      jobs.map((j) => j.id),
    );
    return jobs.length;
  });
}

// Each pg-boss configuration runs right before the two queen runs it is compared with, so all
// three see the same machine load.
console.log('\n| batch | consumers | partitions | queen msgs/s | p50 ms | p99 ms | pg-boss msgs/s | p50 ms | p99 ms | ratio |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const batch of [1, 10, 100]) {
  for (const consumers of [1, 16]) {
    const peer = await bossRun(batch, consumers);
    for (const partitions of [1, 1000]) {
      const queue = `q_${batch}_${consumers}_${partitions}`;
      await fill(queue, partitions, prefill(batch, consumers));
      const run = await drive(consumers, () => queenCycle(`/api/v1/pop/queue/${queue}?batch=${batch}`));
      console.log(
        `| ${batch} | ${consumers} | ${partitions} | ${fmt(rate(run))} | ${fmt(pct(run.latencies, 50))} | ${fmt(pct(run.latencies, 99))} | ` +
          `${fmt(rate(peer))} | ${fmt(pct(peer.latencies, 50))} | ${fmt(pct(peer.latencies, 99))} | ${(rate(run) / rate(peer)).toFixed(1)}x |`,
      );
    }
  }
}
await boss.stop({ graceful: false, wait: true });

console.log('\nfan-out: 20,000 messages over 100 partitions, 4 consumers per group, batch 100, every group drains everything');
console.log('| groups | deliveries | seconds | deliveries/s |');
console.log('| ---: | ---: | ---: | ---: |');
for (const groups of [1, 5, 10]) {
  const queue = `fan_${groups}`;
  await fill(queue, 100, 20_000);
  const start = performance.now();
  let delivered = 0;
  await Promise.all(
    Array.from({ length: groups * 4 }, async (_, i) => {
      const group = `g${i % groups}`;
      let empty = 0;
      while (empty < 20) {
        const n = await queenCycle(`/api/v1/pop/queue/${queue}?batch=100&consumerGroup=${group}`, group);
        delivered += n;
        empty = n === 0 ? empty + 1 : 0;
        if (n === 0) await sleep(2);
      }
    }),
  );
  const secs = (performance.now() - start) / 1000 - 20 * 0.002;
  if (delivered !== groups * 20_000) throw new Error(`fan-out delivered ${delivered}, expected ${groups * 20_000}`);
  console.log(`| ${groups} | ${delivered.toLocaleString('en-US')} | ${secs.toFixed(2)} | ${fmt(delivered / secs)} |`);
}

// Wildcard pop on 10,000 partitions where one has a message, against a one-partition queue.
await fill('wide', 10_000, 10_000, 1);
for (;;) if ((await queenCycle('/api/v1/pop/queue/wide?batch=10000&partitions=1000')) === 0) break;
await fill('narrow', 1, 1);
for (;;) if ((await queenCycle('/api/v1/pop/queue/narrow?batch=10')) === 0) break;

async function popLatency(queue: string, partition: string, rounds: number) {
  const lat: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await call('POST', '/api/v1/push', { items: [{ queue, partition, payload: { i } }] });
    const t0 = performance.now();
    const { status, body } = await call('GET', `/api/v1/pop/queue/${queue}`);
    lat.push(performance.now() - t0);
    if (status !== 200 || body.partition !== partition) throw new Error(`wildcard pop missed ${queue}/${partition}`);
    await queenCycleAck(body);
  }
  return lat;
}
async function queenCycleAck(body: any) {
  await call('POST', '/api/v1/ack/batch', {
    acknowledgments: body.messages.map((m: any) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: body.leaseId,
      status: 'completed',
    })),
  });
}

const fresh = await popLatency('wide', 'p5000', 50);
// Time passing, without waiting for it: the partitions were last written an hour ago. VACUUM stands
// for autovacuum removing the index entries this UPDATE leaves behind.
await db.query(
  `UPDATE queen.log_partitions p SET last_write_at = now() - interval '1 hour' FROM queen.queues q WHERE q.id = p.queue_id AND q.name = 'wide'`,
);
await db.query('VACUUM ANALYZE queen.log_partitions');
await db.query('VACUUM ANALYZE queen.log_consumers');
const idleWide = await popLatency('wide', 'p5000', 300);
const one = await popLatency('narrow', 'p0', 300);
console.log('\nwildcard pop latency (ms), one partition has a message, 10,000 partitions fully consumed by the group');
console.log('| queue | p50 | p99 | vs one partition (p50) |');
console.log('| --- | ---: | ---: | ---: |');
console.log(`| 1 partition | ${pct(one, 50).toFixed(2)} | ${pct(one, 99).toFixed(2)} | 1.00x |`);
console.log(
  `| 10,000 partitions, idle (last written > 2 min ago) | ${pct(idleWide, 50).toFixed(2)} | ${pct(idleWide, 99).toFixed(2)} | ${(pct(idleWide, 50) / pct(one, 50)).toFixed(2)}x |`,
);
console.log(
  `| 10,000 partitions, all written in the last 2 min (inside the slack) | ${pct(fresh, 50).toFixed(2)} | ${pct(fresh, 99).toFixed(2)} | ${(pct(fresh, 50) / pct(one, 50)).toFixed(2)}x |`,
);

await call('POST', '/api/v1/push', { items: [{ queue: 'wide', partition: 'p5000', payload: 1 }] });
const [ids] = await db.query<{ q: string; s: Date }>(
  `SELECT q.id AS q, s.scanned_at AS s FROM queen.queues q JOIN queen.consumer_subscriptions s ON s.queue_id = q.id WHERE q.name = 'wide'`,
);
const plan = await db.query<{ 'QUERY PLAN': string }>(
  `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
   WITH cand AS (
     SELECT lp.id FROM queen.log_partitions lp WHERE lp.queue_id = $1 AND lp.last_write_at >= $2::timestamptz - interval '2 minutes'
     UNION
     SELECT lc.partition_id FROM queen.log_consumers lc WHERE lc.queue_id = $1 AND lc.consumer_group = '__QUEUE_MODE__' AND lc.pending)
   SELECT lp.id, lp.name, lp.last_offset, lc.committed FROM cand
   JOIN LATERAL (SELECT y.* FROM queen.log_partitions y WHERE y.id = cand.id LIMIT 1) AS lp ON true
   LEFT JOIN LATERAL (SELECT x.* FROM queen.log_consumers x WHERE x.partition_id = cand.id AND x.consumer_group = '__QUEUE_MODE__' LIMIT 1) AS lc ON true
   WHERE lc.partition_id IS NULL OR lc.committed < lp.last_offset OR lc.pending
   ORDER BY lc.lease_acquired_at NULLS FIRST, lp.id`,
  [ids!.q, ids!.s],
);
console.log('\nwildcard candidate query on the 10,000-partition queue (EXPLAIN ANALYZE):');
for (const row of plan) console.log('  ' + row['QUERY PLAN']);

// The dead-letter move, both ways SQL that never decompresses allows
// (docs/architecture.md#what-sql-cannot-see). Ours: the ack call answers with the segment, the
// broker decodes the frame, a second call recomputes under the cursor lock and commits the DLQ row
// with the cursor move. The alternative: an interactive transaction holding the cursor lock across
// BEGIN, lock, read segment, (decode), insert, update, COMMIT.
await fill('dead', 1, 400);
const deadPid = (await call('GET', '/api/v1/pop/queue/dead?batch=1')).body;
await queenCycleAck(deadPid);
const guarded: number[] = [];
const interactive: number[] = [];
for (let i = 0; i < 150; i++) {
  for (const way of ['guarded', 'interactive'] as const) {
    const { body } = await call('GET', '/api/v1/pop/queue/dead?batch=1');
    const m = body.messages[0];
    const t0 = performance.now();
    if (way === 'guarded') {
      await call('POST', '/api/v1/ack/batch', {
        acknowledgments: [
          { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status: 'dlq', error: 'bench' },
        ],
      });
      guarded.push(performance.now() - t0);
      continue;
    }
    await db.transaction(async (tx) => {
      const [c] = await tx.query<{ worker_id: string }>(
        `SELECT worker_id FROM queen.log_consumers WHERE partition_id = $1 AND consumer_group = '__QUEUE_MODE__' FOR UPDATE`,
        [m.partitionId],
      );
      if (c!.worker_id !== body.leaseId) throw new Error('lease moved');
      const [seg] = await tx.query<{ base_offset: string; end_offset: string; created_at: Date; blob: Uint8Array }>(
        `SELECT base_offset, end_offset, created_at, blob FROM queen.log_segments WHERE partition_id = $1 AND base_offset <= $2 ORDER BY base_offset DESC LIMIT 1`,
        [m.partitionId, m.offset],
      );
      const base = Number(seg!.base_offset);
      const [f] = decodeSegment(seg!.blob, base, m.offset, m.offset, Number(seg!.end_offset) - base + 1);
      await tx.query(
        `INSERT INTO queen.log_dlq (partition_id, consumer_group, msg_offset, message_id, transaction_id, trace_id, producer_sub, payload, encrypted, error_message, retry_count, created_at)
         VALUES ($1, '__QUEUE_MODE__', $2, $3, $4, NULL, NULL, $5, false, 'bench', 0, $6)`,
        [m.partitionId, m.offset, bytesToUuid(f!.messageId), f!.transactionId, f!.payload, seg!.created_at],
      );
      await tx.query(
        `UPDATE queen.log_consumers SET committed = $2, batch_end = NULL, worker_id = NULL, lease_expires_at = NULL
          WHERE partition_id = $1 AND consumer_group = '__QUEUE_MODE__'`,
        [m.partitionId, m.offset],
      );
    });
    interactive.push(performance.now() - t0);
  }
}
console.log('\ndead-letter ack latency (ms), 150 each, alternating');
console.log('| way | round trips | p50 | p99 |');
console.log('| --- | ---: | ---: | ---: |');
console.log(`| guarded recompute (ours) | 2 | ${pct(guarded, 50).toFixed(2)} | ${pct(guarded, 99).toFixed(2)} |`);
console.log(`| interactive transaction, FOR UPDATE | 6 | ${pct(interactive, 50).toFixed(2)} | ${pct(interactive, 99).toFixed(2)} |`);
// One ack/batch of a whole popped batch by transactionId (no offsets echoed): the transactionId ->
// offset resolution must stay linear in the batch. Segments of 100, as the producers above write.
console.log('\nack/batch of a whole pop by transactionId, one partition, median of 5 (ms)');
console.log('| batch | pop | ack |');
console.log('| ---: | ---: | ---: |');
for (const batch of [100, 1000, 10000]) {
  const pops: number[] = [];
  const acks: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    const partition = `b${batch}-${rep}`;
    for (let s = 0; s < batch; s += 100) {
      await call('POST', '/api/v1/push', {
        items: Array.from({ length: 100 }, (_, i) => ({ queue: 'bigack', partition, payload: { i: s + i } })),
      });
    }
    let t0 = performance.now();
    const { body } = await call('GET', `/api/v1/pop/queue/bigack/partition/${partition}?batch=${batch}`);
    pops.push(performance.now() - t0);
    if (body.messages.length !== batch) throw new Error(`popped ${body.messages.length} of ${batch}`);
    t0 = performance.now();
    const res = await call('POST', '/api/v1/ack/batch', {
      acknowledgments: body.messages.map((m: any) => ({
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        leaseId: body.leaseId,
        status: 'completed',
      })),
    });
    acks.push(performance.now() - t0);
    if (res.body.some((r: any) => !r.success)) throw new Error('ack failed');
  }
  console.log(`| ${batch.toLocaleString('en')} | ${pct(pops, 50).toFixed(1)} | ${pct(acks, 50).toFixed(1)} |`);
}
console.log(
  `\nload average at the end: ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (${(await import('node:os')).cpus().length} cores)`,
);

await db.close();
await admin.query(`DROP DATABASE ${dbName} WITH (FORCE)`);
await admin.close();
