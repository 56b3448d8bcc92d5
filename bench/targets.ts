// The targets table (bench/README.md#figures) in one run beside pg-boss 10.4.2 on the same private PostgreSQL: msgs/s, CPU per
// message (server process group and PostgreSQL, from /proc), bytes per message, batch-1 latency,
// wildcard pop over 10,000 partitions and dedup with a full window, each against its target.
//   npm run bench -- targets            (5-10 minutes; see bench/README.md)
//   npx tsx bench/targets.ts push pop   (only some phases: push pop latency wildcard dedup; or
//                                        BENCH_PHASES="push pop" npm run bench -- targets)
// BENCH_SECONDS (4) per window, BENCH_ROUNDS (3) alternating windows per system, BENCH_PG_SETTINGS,
// BENCH_SERVER_DIR (another checkout's server.ts), BENCH_SERVER_ENV ("K=V,K=V" for the server, e.g.
// QUEEN_V2_ZSTD_LEVEL=1), BENCH_JSON (write the figures there).
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { describeParts, schemaBytes, totalBytes } from './lib/bytes.js';
import { measureDedup, slowdown, type DedupResult } from './lib/dedup.js';
import { drive, fmt, median, merge, pct, rate, withQuota, type Cell } from './lib/load.js';
import { addUsage, Meter, perMsg, type Usage } from './lib/meter.js';
import { payloadOf } from './lib/payload.js';
import { parseSettings, SHARED_LIKE_SETTINGS, startCluster, withClient } from './lib/postgres.js';
import { push, pushBody } from './lib/queen.js';
import { SERVER_DIR, startServer } from './lib/server.js';
import { measureWildcard, ratio, type WildcardResult } from './lib/wildcard.js';
import { BATCH, CLIENTS, fill, PARTITIONS, popCycle, pushCycle } from './lib/workload.js';

const PG_PORT = 7250;
const SERVER_PORT = 7210;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PHASES = ['push', 'pop', 'latency', 'wildcard', 'dedup'];
const asked = process.argv.slice(2).length ? process.argv.slice(2) : (process.env.BENCH_PHASES ?? '').split(/[ ,]+/).filter(Boolean);
const chosen = asked.length ? asked : PHASES;
for (const p of chosen) if (!PHASES.includes(p)) throw new Error(`unknown phase "${p}"; choose from ${PHASES.join(' ')}`);
const load0 = loadavg()[0]!;

const settings = parseSettings(process.env.BENCH_PG_SETTINGS);
const cluster = startCluster({ port: PG_PORT, settings, statements: process.env.BENCH_PGSS === '1' });
// Whatever fails, leave no cluster or server behind.
process.once('exit', () => cluster.stop());
const url = cluster.url('bench');
await withClient(cluster.url('postgres'), (c) => c.query('CREATE DATABASE bench'));
const db = new pg.Client({ connectionString: url });
await db.connect();
const server = await startServer({ databaseUrl: url, port: SERVER_PORT, env: parseSettings(process.env.BENCH_SERVER_ENV) });
process.once('exit', () => {
  try {
    process.kill(-server.pid, 'SIGKILL');
  } catch {
    // already stopped
  }
});
const meter = new Meter(server.pid, cluster.postmasterPid());
const boss = new PgBoss({ connectionString: url, max: 10, supervise: false, schedule: false });
boss.on('error', (e) => console.error('pg-boss', e));
await boss.start();
await boss.createQueue('bench');
await boss.createQueue('lat');
await boss.createQueue('consume');
const base = server.base;

interface Measured {
  cell: Cell;
  cpu: Usage;
}
const join = (xs: Measured[]): Measured => ({ cell: merge(xs.map((x) => x.cell)), cpu: addUsage(xs.map((x) => x.cpu)) });
const jobs = (n: number, name: string) => Array.from({ length: n }, (_, i) => ({ name, data: JSON.parse(payloadOf(i)) }));
const pushBench = pushCycle(base, 'bench');
const popConsume = popCycle(base, 'consume');
const insertCycle = async () => (await boss.insert(jobs(BATCH, 'bench')), BATCH);
// Pop windows keep the backlog between BACKLOG/2 and BACKLOG on both sides: each window consumes
// BACKLOG/2 and is topped up before the next, with segments of 100 as the push phase writes them.
// pg-boss's fetch sorts its whole backlog (bench/README.md), so its cost per message grows with it.
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
let backlog = 0; // ours, counted here
let empties = 0;
const pops = withQuota(async () => {
  const n = await popConsume();
  backlog -= n;
  if (n === 0) empties++;
  return n;
}, BATCH);
const fetches = withQuota(async () => {
  const got = await boss.fetch('consume', { batchSize: BATCH });
  if (got.length === 0) return (empties++, 0);
  await boss.complete(
    'consume',
    got.map((j) => j.id),
  );
  return got.length;
}, BATCH);
// Autovacuum is off, as on the shared cluster: this ANALYZE stands in for it, so that neither side
// plans on an empty table's statistics.
async function topUp() {
  backlog += await fill(base, 'consume', BACKLOG - backlog);
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'consume' AND state = 'created'`);
  for (let n = rows[0].n; n < BACKLOG; n += 5000) await boss.insert(jobs(Math.min(5000, BACKLOG - n), 'consume'));
  await db.query('ANALYZE');
}

async function consume(windows: number) {
  const a: Measured[] = [];
  const b: Measured[] = [];
  for (let r = -1; r < windows; r++) {
    for (const [q, out] of [
      [pops, a],
      [fetches, b],
    ] as const) {
      await topUp();
      q.left = r < 0 ? 1000 : BACKLOG / 2; // round -1 warms up
      const x = await meter.window(() => drive(CLIENTS, 1e6, q.cycle));
      if (r >= 0) out.push({ cell: x.out, cpu: x.cpu });
    }
  }
  return { ours: join(a), peer: join(b) };
}

// Alternating windows, ours then pg-boss, so load from other work hits both alike.
async function alternate(ours: (c: number, s: number) => Promise<number>, peer: (c: number, s: number) => Promise<number>) {
  await drive(CLIENTS, 1, ours, 20);
  await drive(CLIENTS, 1, peer, 20);
  const a: Measured[] = [];
  const b: Measured[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const x = await meter.window(() => drive(CLIENTS, SECONDS, ours, 20));
    a.push({ cell: x.out, cpu: x.cpu });
    const y = await meter.window(() => drive(CLIENTS, SECONDS, peer, 20));
    b.push({ cell: y.out, cpu: y.cpu });
  }
  return { ours: join(a), peer: join(b) };
}

const figures: Record<string, unknown> = {};
let pushed: Awaited<ReturnType<typeof alternate>> | undefined;
let popped: Awaited<ReturnType<typeof consume>> | undefined;
let bytes: { ours: number; peer: number; oursLines: string[]; peerLines: string[] } | undefined;
let latency: { ours: number[]; peer: number[] } | undefined;
let wildcard: WildcardResult | undefined;
let dedup: DedupResult | undefined;
let inserted = 0;

try {
  if (chosen.includes('push') || chosen.includes('pop')) {
    pushed = await alternate(pushBench, insertCycle);
    const ourMsgs = Number(
      (await db.query(`SELECT coalesce(sum(end_offset - base_offset + 1), 0) AS n FROM queen.log_segments`)).rows[0].n,
    );
    inserted = Number((await db.query(`SELECT count(*) AS n FROM pgboss.job`)).rows[0].n);
    const ours = await schemaBytes(db, 'queen');
    const peer = await schemaBytes(db, 'pgboss');
    bytes = {
      ours: totalBytes(ours) / ourMsgs,
      peer: totalBytes(peer) / inserted,
      oursLines: describeParts(ours, ourMsgs),
      peerLines: describeParts(peer, inserted),
    };
    figures.bytes = { ours: bytes.ours, peer: bytes.peer, ourMsgs, inserted, oursParts: ours, peerParts: peer };
  }
  if (chosen.includes('pop')) popped = await consume(3 * ROUNDS);
  if (chosen.includes('latency')) {
    latency = { ours: [], peer: [] };
    for (let i = 0; i < 400; i++) {
      let t0 = performance.now();
      await push(
        base,
        pushBody('lat', () => 'p0', 1),
      );
      if (i >= 20) latency.ours.push(performance.now() - t0);
      t0 = performance.now();
      await boss.insert(jobs(1, 'lat'));
      if (i >= 20) latency.peer.push(performance.now() - t0);
    }
  }
  if (chosen.includes('wildcard')) wildcard = await measureWildcard(base, db);
  if (chosen.includes('dedup')) dedup = await measureDedup(meter, base, SECONDS, ROUNDS);
} finally {
  await boss.stop({ graceful: false, wait: true }).catch(() => {});
  await server.stop();
  await db.end();
}

// ---- the table ----
const rows: string[][] = [];
const pass = (ok: boolean) => (ok ? 'PASS' : 'MISS');
const us = (x: number) => `${x.toFixed(1)} µs`;
const x2 = (x: number) => `${x.toPrecision(3)}x`;
function row(figure: string, ours: string, peer: string, r: string, target: string, ok: boolean | null) {
  rows.push([figure, ours, peer, r, target, ok === null ? '' : pass(ok)]);
}

// The three rows of a throughput phase: msgs/s against the peer, server CPU, PostgreSQL CPU.
function throughputRows(names: [string, string, string], m: { ours: Measured; peer: Measured }, rateTarget: number, pgTarget: number) {
  const [o, p] = [m.ours, m.peer];
  const rr = rate(o.cell) / rate(p.cell);
  row(names[0], fmt(rate(o.cell)), fmt(rate(p.cell)), x2(rr), `>= ${rateTarget}x`, rr >= rateTarget);
  const s = perMsg(o.cpu.server, o.cell.msgs);
  row(names[1], us(s), '(in-process)', '', '<= 6 µs', s <= 6);
  const [po, pp] = [perMsg(o.cpu.postgres, o.cell.msgs), perMsg(p.cpu.postgres, p.cell.msgs)];
  row(names[2], us(po), us(pp), x2(po / pp), `<= ${pgTarget}x`, po / pp <= pgTarget);
  const side = (x: Measured) => ({ msgs: x.cell.msgs, seconds: x.cell.seconds, cpu: x.cpu, idle: x.cell.idle });
  return { ours: side(o), peer: side(p) };
}
if (pushed) {
  figures.push = throughputRows(
    ['push msgs/s (4 clients x batch 100)', 'server CPU per message pushed', 'PostgreSQL CPU per message inserted'],
    pushed,
    2.5,
    0.2,
  );
}
if (popped) {
  figures.pop = throughputRows(
    ['pop+ack msgs/s (fetch(100)+complete)', 'server CPU per message popped+acked', 'PostgreSQL CPU per message consumed'],
    popped,
    10,
    0.05,
  );
}
if (bytes)
  row('bytes stored per message', fmt(bytes.ours), fmt(bytes.peer), x2(bytes.ours / bytes.peer), '<= 0.3x', bytes.ours / bytes.peer <= 0.3);
if (latency) {
  const [o, p] = [median(latency.ours), median(latency.peer)];
  row('batch-1 push latency p50 (HTTP vs insert)', `${o.toFixed(2)} ms`, `${p.toFixed(2)} ms`, x2(o / p), '<= 1.0x', o <= p);
  figures.latency = { ours: o, peer: p, oursP99: pct(latency.ours, 99), peerP99: pct(latency.peer, 99) };
}
if (wildcard) {
  const w = wildcard;
  const idle = ratio(w.idleWide, w.idleNarrow);
  const fresh = ratio(w.freshWide, w.freshNarrow);
  row(
    'wildcard pop p50, 10,000 idle partitions / 1',
    `${median(w.idleWide).toFixed(2)} ms`,
    `${median(w.idleNarrow).toFixed(2)} ms (1 partition)`,
    x2(idle),
    '<= 2x',
    idle <= 2,
  );
  if (w.freshWide.length >= 10) {
    row(
      'wildcard pop p50, 10,000 written < 2 min / 1',
      `${median(w.freshWide).toFixed(2)} ms`,
      `${median(w.freshNarrow).toFixed(2)} ms (1 partition)`,
      x2(fresh),
      '<= 2x',
      fresh <= 2,
    );
  } else {
    row(
      'wildcard pop p50, 10,000 written < 2 min / 1',
      `not measured: fill + drain took ${w.freshAge.toFixed(0)} s`,
      '',
      '',
      '<= 2x',
      null,
    );
  }
  row('wildcard pop finds an hour-old backlog', w.backlogFound ? 'found' : 'not found', '', '', 'found', w.backlogFound);
  figures.wildcard = {
    idle,
    fresh,
    freshAge: w.freshAge,
    backlogFound: w.backlogFound,
    idleWide: median(w.idleWide),
    idleNarrow: median(w.idleNarrow),
    freshWide: median(w.freshWide),
    freshNarrow: median(w.freshNarrow),
  };
}
if (dedup) {
  const worst = Math.max(slowdown(dedup, dedup.empty.cell), slowdown(dedup, dedup.emptyBefore.cell));
  row(
    'dedup: push into 1,000,000 hashes vs empty',
    `${fmt(rate(dedup.full.cell))} msgs/s`,
    `${fmt(rate(dedup.empty.cell))} msgs/s (empty)`,
    `${worst.toFixed(2)}x slower`,
    '<= 2x',
    worst <= 2,
  );
  figures.dedup = {
    worst,
    full: rate(dedup.full.cell),
    empty: rate(dedup.empty.cell),
    emptyBefore: rate(dedup.emptyBefore.cell),
    fillSeconds: dedup.fillSeconds,
    fullCpu: dedup.full.cpu,
    emptyCpu: dedup.empty.cpu,
    fullMsgs: dedup.full.cell.msgs,
    emptyMsgs: dedup.empty.cell.msgs,
  };
}

const head = ['figure', 'ours', 'pg-boss', 'ratio', 'target', 'result'];
console.log(
  `\nqueen-serverless vs pg-boss 10.4.2, one run, same private PostgreSQL 15 (port ${PG_PORT}), server.ts from ${SERVER_DIR} ${process.env.BENCH_SERVER_ENV ?? ''}`,
);
console.log(
  `${CLIENTS} HTTP clients x batch ${BATCH} over ${PARTITIONS} partitions, ~200 B JSON payloads, a UUID transactionId per item, dedup window 3600 s;`,
);
console.log(
  `push: ${ROUNDS} alternating windows of ${SECONDS} s per system; pop+ack: ${3 * ROUNDS} alternating windows per system, each consuming ${fmt(BACKLOG / 2)}`,
);
console.log(
  `from a backlog topped up to ${fmt(BACKLOG)} before it; pg-boss insert() and fetch(${BATCH})+complete(), supervise and schedule off`,
);
console.log(
  `PostgreSQL: ${Object.entries({ ...SHARED_LIKE_SETTINGS, ...settings })
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')} (bench/lib/postgres.ts)\n`,
);
console.log(`| ${head.join(' | ')} |`);
console.log(`| ${head.map(() => '---').join(' | ')} |`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);

console.log("\nCPU is utime+stime+cutime+cstime from /proc: the server's process group and the postmaster with its children,");
console.log('per message over the measured windows. msgs/s and latencies depend on other load on this 2-core machine;');
console.log(`CPU per message does not. Load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.`);
if (pushed && popped) {
  const c = (m: Measured) =>
    `server ${us(perMsg(m.cpu.server, m.cell.msgs))} + PostgreSQL ${us(perMsg(m.cpu.postgres, m.cell.msgs))} + load generator ${us(perMsg(m.cpu.self, m.cell.msgs))}`;
  console.log(
    `\nper message, push: ${c(pushed.ours)}; pg-boss insert: PostgreSQL ${us(perMsg(pushed.peer.cpu.postgres, pushed.peer.cell.msgs))} + pg-boss in process ${us(perMsg(pushed.peer.cpu.self, pushed.peer.cell.msgs))}`,
  );
  console.log(
    `per message, pop+ack: ${c(popped.ours)}; pg-boss fetch+complete: PostgreSQL ${us(perMsg(popped.peer.cpu.postgres, popped.peer.cell.msgs))} + pg-boss in process ${us(perMsg(popped.peer.cpu.self, popped.peer.cell.msgs))}`,
  );
  const lat = (m: Measured) => `p50 ${pct(m.cell.latencies, 50).toFixed(1)} / p99 ${pct(m.cell.latencies, 99).toFixed(1)} ms`;
  console.log(
    `request latency: push ${lat(pushed.ours)}, insert ${lat(pushed.peer)}, pop+ack ${lat(popped.ours)}, fetch+complete ${lat(popped.peer)}`,
  );
  if (empties) console.log(`(${empties} pops or fetches came back empty although the backlog was not: lease contention)`);
}
if (bytes) {
  console.log(`\nbytes per message, ours (queen schema, ${fmt(Number((figures.bytes as { ourMsgs: number }).ourMsgs))} messages):`);
  for (const l of bytes.oursLines) console.log(`  ${l}`);
  console.log(`bytes per message, pg-boss (pgboss schema, ${fmt(inserted)} jobs):`);
  for (const l of bytes.peerLines) console.log(`  ${l}`);
}
if (latency)
  console.log(
    `\nbatch-1 push, 380 alternating requests each: p99 ours ${pct(latency.ours, 99).toFixed(2)} ms, pg-boss ${pct(latency.peer, 99).toFixed(2)} ms`,
  );
if (wildcard) {
  const w = wildcard;
  console.log(
    `\nwildcard: p99 idle ${pct(w.idleWide, 99).toFixed(2)} vs ${pct(w.idleNarrow, 99).toFixed(2)} ms; written-recently p99 ${pct(w.freshWide, 99).toFixed(2)} vs ${pct(w.freshNarrow, 99).toFixed(2)} ms (${w.freshWide.length} rounds, all within ${w.freshAge.toFixed(0)} s of the fill)`,
  );
  console.log(`backlog check: ${w.backlogNote}`);
}
if (dedup) {
  const d = dedup;
  const cpu = (m: { cell: Cell; cpu: Usage }) =>
    `server ${us(perMsg(m.cpu.server, m.cell.msgs))}, PostgreSQL ${us(perMsg(m.cpu.postgres, m.cell.msgs))}`;
  console.log(
    `\ndedup (4 clients x batch 100 into one partition): window filled with ${fmt(d.hashes)} hashes through /push in ${d.fillSeconds.toFixed(1)} s`,
  );
  console.log(`  empty before the fill ${fmt(rate(d.emptyBefore.cell))} msgs/s (${cpu(d.emptyBefore)})`);
  console.log(`  empty, alternating    ${fmt(rate(d.empty.cell))} msgs/s (${cpu(d.empty)})`);
  console.log(`  full, alternating     ${fmt(rate(d.full.cell))} msgs/s (${cpu(d.full)})`);
}
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ rows, figures, load: [load0, loadavg()[0]] }, null, 2));
