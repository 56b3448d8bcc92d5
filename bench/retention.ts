// Retention on one partition of 1,000,000 messages in segments of 100: time to delete, rows
// touched, and pop latency on that partition before and after (dead tuples, then VACUUM).
// Own database on the local PostgreSQL: npx tsx bench/retention.ts
// (BENCH_DATABASE_URL to point elsewhere; the database named in it is dropped and recreated.)
import { allFunctions } from '../functions/index.js';
import { runRetention } from '../lib/broker/retention.js';
import { encodeSegment } from '../lib/codec/segment.js';
import { hashTransactionIds } from '../lib/codec/xxh3.js';
import { readConfig } from '../lib/config.js';
import type { Database } from '../lib/db/types.js';
import { buildApp } from '../lib/http/app.js';
import { freshDatabase } from './lib/postgres.js';

const URL_ = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/queen_bench_retention';
const SEGMENTS = 10_000;
const PER_SEGMENT = 100;
const EXPIRED = 9_000; // segments older than retentionSeconds
const POPS = 200;
const BEHIND_POPS = 20;

// Incompressible-ish text so a segment is the size of a real one (and lands in TOAST).
let seed = 0x2545f491;
function noise(chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    out += 'abcdefghijklmnopqrstuvwxyz0123456789'[(seed >>> 0) % 36];
  }
  return out;
}

async function fill(db: Database): Promise<string> {
  const txnIds = Array.from({ length: PER_SEGMENT }, (_, i) => `bench-${i}`);
  const frames = txnIds.map((transactionId, i) => ({
    messageId: new Uint8Array(16).fill(i),
    traceId: null,
    transactionId,
    producerSub: null,
    encrypted: false,
    payload: new TextEncoder().encode(JSON.stringify({ order: i, customer: `cus_${noise(14)}`, amount: i * 3.5, token: noise(300) })),
  }));
  const blob = await encodeSegment(frames, 3);
  const hashes = hashTransactionIds(txnIds);
  await db.query(`SELECT queen.configure_queue(p_tenant => 'default', p_name => 'bench', p_namespace => NULL, p_task => NULL,
                                               p_options => '{"retentionEnabled":true,"retentionSeconds":3600}'::jsonb)`);
  const [p] = await db.query<{ id: string }>(
    `INSERT INTO queen.log_partitions (queue_id, name, last_offset) SELECT id, 'Default', $1 FROM queen.queues WHERE name = 'bench' RETURNING id`,
    [SEGMENTS * PER_SEGMENT - 1],
  );
  // Expired segments two hours old, the rest ten minutes old; created_at ascending with offsets.
  const createdAt = `CASE WHEN g < ${EXPIRED} THEN now() - interval '2 hours' ELSE now() - interval '10 minutes' END + g * interval '50 milliseconds'`;
  for (const [table, column, bytes] of [
    ['log_segments', 'blob', blob],
    ['log_txns', 'hashes', hashes],
  ] as const) {
    await db.query(
      `INSERT INTO queen.${table} (partition_id, base_offset, end_offset, created_at, ${column})
       SELECT $1, g * ${PER_SEGMENT}, g * ${PER_SEGMENT} + ${PER_SEGMENT - 1}, ${createdAt}, $2::bytea
         FROM generate_series(0, ${SEGMENTS - 1}) g`,
      [p!.id, bytes],
    );
  }
  console.log(
    `filled: ${SEGMENTS} segments of ${PER_SEGMENT} (${SEGMENTS * PER_SEGMENT} messages), blob ${blob.length} B, hashes ${hashes.length} B`,
  );
  return p!.id;
}

async function counts(db: Database) {
  const [t] = await db.query<{ toast: string }>(
    "SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'queen.log_segments'::regclass",
  );
  const [r] = await db.query<Record<string, string>>(
    `SELECT (SELECT count(*) FROM queen.log_segments) AS segments, (SELECT count(*) FROM queen.log_txns) AS txns,
            (SELECT count(*) FROM ${t!.toast}) AS toast_chunks`,
  );
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)]));
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

async function popLatency(db: Database, partitionId: string, label: string) {
  const app = buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => db, log: () => {} });
  const pop = async (group: string) => {
    const t = performance.now();
    const res = await app.request(`/api/v1/pop/queue/bench/partition/Default?consumerGroup=${group}&batch=10&autoAck=true`);
    const body = res.status === 200 ? ((await res.json()) as { messages: { offset: number }[] }) : null;
    return { ms: performance.now() - t, first: body?.messages[0]?.offset ?? null };
  };
  const setCursor = (group: string, committed: number) =>
    db.query(
      `INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES ($1, $2, $3)
       ON CONFLICT (partition_id, consumer_group) DO UPDATE SET committed = $3, batch_end = NULL, lease_expires_at = NULL`,
      [partitionId, group, committed],
    );

  await setCursor('warm', 959_999);
  for (let i = 0; i < 50; i++) await pop('warm');
  await setCursor('tail', 949_999);
  const tail: number[] = [];
  for (let i = 0; i < POPS; i++) tail.push((await pop('tail')).ms);

  // A group that had read nothing: after retention its next pop must step over the deleted prefix.
  // Buffers the pop's forward segment scan touches from offset 0: deterministic, unlike latency on
  // a shared machine; the first scan after the delete also sets the index's dead-tuple hints.
  const buffers: number[] = [];
  for (let i = 0; i < 2; i++) {
    const [plan] = await db.query<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT sg.base_offset FROM queen.log_segments sg
        WHERE sg.partition_id = $1 AND sg.base_offset >= 0 AND sg.end_offset >= 0 ORDER BY sg.base_offset LIMIT 1`,
      [partitionId],
    );
    const top = plan!['QUERY PLAN'][0].Plan;
    buffers.push((top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0));
  }
  const behind: number[] = [];
  let first: number | null = null;
  for (let i = 0; i < BEHIND_POPS; i++) {
    await setCursor('behind', -1);
    const r = await pop('behind');
    behind.push(r.ms);
    first = r.first;
  }
  console.log(
    `${label.padEnd(28)} tail pop p50 ${pct(tail, 50).toFixed(2)} ms p95 ${pct(tail, 95).toFixed(2)} ms | ` +
      `behind pop (first offset ${first}) first ${behind[0]!.toFixed(2)} ms p50 ${pct(behind, 50).toFixed(2)} ms, ` +
      `segment scan ${buffers[0]} then ${buffers[1]} buffers`,
  );
  return { tailP50: pct(tail, 50), tailP95: pct(tail, 95), behindFirst: behind[0]!, behindP50: pct(behind, 50), first };
}

const db = await freshDatabase(URL_);
try {
  const t0 = performance.now();
  const partitionId = await fill(db);
  await db.query('VACUUM ANALYZE queen.log_segments');
  await db.query('VACUUM ANALYZE queen.log_txns');
  console.log(`fill + vacuum: ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  await popLatency(db, partitionId, 'before retention');
  const before = await counts(db);
  const t1 = performance.now();
  const report = await runRetention(db);
  const retentionMs = performance.now() - t1;
  const after = await counts(db);
  console.log(
    `retention: ${retentionMs.toFixed(0)} ms; deleted ${report.segmentsDeleted} segments (${report.messagesDeleted} messages), ` +
      `${report.sidecarRowsPurged} sidecar rows, ${before.toast_chunks! - after.toast_chunks!} TOAST chunks; ` +
      `rows touched ${before.segments! - after.segments! + before.txns! - after.txns! + before.toast_chunks! - after.toast_chunks!} + 1 partition row`,
  );
  const [w] = await db.query<{ log_start: string; txns_start: string }>(
    'SELECT log_start, txns_start FROM queen.log_partitions WHERE id = $1',
    [partitionId],
  );
  console.log(`watermarks: log_start ${w!.log_start}, txns_start ${w!.txns_start}`);
  const t2 = performance.now();
  await runRetention(db);
  console.log(`second run (nothing to do): ${(performance.now() - t2).toFixed(1)} ms`);

  await popLatency(db, partitionId, 'after retention, no vacuum');
  const t3 = performance.now();
  await db.query('VACUUM queen.log_segments');
  await db.query('VACUUM queen.log_txns');
  console.log(`VACUUM after retention: ${(performance.now() - t3).toFixed(0)} ms`);
  await popLatency(db, partitionId, 'after retention + VACUUM');
} finally {
  await db.close();
}
