// Where the CPU goes under the targets' load (bench/lib/workload.ts), per phase (push; pop+ack): the server's V8 profile over
// exactly the measured window (inspector protocol), PostgreSQL's pg_stat_statements (track = all,
// so the statements inside push_segments / pop / ack show), auto_explain plans with ANALYZE and
// BUFFERS of those inner statements, and `perf` over the backends when BENCH_PERF=1.
//   npx tsx bench/profile.ts [push] [pop]        (BENCH_SECONDS=8 per phase)
// Writes the .cpuprofile files, plans and perf reports to BENCH_PROFILE_DIR (/tmp/queen-profile).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { callersOf, formatShares, summarise } from './lib/cpuprofile.js';
import { Inspector } from './lib/inspector.js';
import { drive, fmt, rate } from './lib/load.js';
import { Meter, perMsg } from './lib/meter.js';
import { startCluster, withClient } from './lib/postgres.js';
import { startServer } from './lib/server.js';
import { groupSystemSeconds } from './lib/cpu.js';
import {
  categorise,
  inclusiveOf,
  perfRecord,
  perfSymbols,
  POSTGRES_ENTRY_POINTS,
  POSTGRES_RULES,
  SERVER_RULES,
  type Rules,
} from './lib/perf.js';
import { BATCH, CLIENTS, fill, popCycle, pushCycle } from './lib/workload.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const OUT = process.env.BENCH_PROFILE_DIR ?? '/tmp/queen-profile';
const INSPECT_PORT = 7230;
const phases = process.argv.slice(2).length ? process.argv.slice(2) : ['push', 'pop'];
mkdirSync(OUT, { recursive: true });

const cluster = startCluster({
  port: 7250,
  statements: true,
  settings: {
    session_preload_libraries: 'auto_explain',
    'auto_explain.log_min_duration': '0',
    'auto_explain.log_analyze': 'on',
    'auto_explain.log_buffers': 'on',
    'auto_explain.log_nested_statements': 'on',
    'auto_explain.sample_rate': '0',
  },
});
await withClient(cluster.url('postgres'), (c) => c.query('CREATE DATABASE bench'));
const url = cluster.url('bench');
const PERF = process.env.BENCH_PERF === '1';
// perf resolves JIT-compiled JavaScript through the /tmp/perf-<pid>.map this flag writes.
const server = await startServer({
  databaseUrl: url,
  port: 7211,
  nodeArgs: [`--inspect=127.0.0.1:${INSPECT_PORT}`, ...(PERF ? ['--perf-basic-prof-only-functions'] : [])],
});
const inspector = await Inspector.connect(INSPECT_PORT);
const meter = new Meter(server.pid, cluster.postmasterPid());
const db = new pg.Client({ connectionString: url });
await db.connect();
await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
const base = server.base;

async function statements(): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT calls, total_exec_time AS ms, rows, shared_blks_hit + shared_blks_read AS blks, wal_bytes, toplevel,
            regexp_replace(query, '\\s+', ' ', 'g') AS q
       FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 20`,
  );
  return rows.map(
    (r) =>
      `${String(r.calls).padStart(7)} calls ${Number(r.ms).toFixed(0).padStart(7)} ms ${(Number(r.ms) / r.calls).toFixed(3).padStart(8)} ms/call ` +
      `${(Number(r.blks) / r.calls).toFixed(1).padStart(7)} blk/call ${(Number(r.wal_bytes) / r.calls).toFixed(0).padStart(7)} WAL B/call ${r.toplevel ? 'top ' : '    '} ${String(r.q).slice(0, 110)}`,
  );
}

// A few executions with auto_explain sampling on (ANALYZE + BUFFERS of the nested statements).
async function explainSample(phase: string, load: () => Promise<unknown>) {
  const log = join(cluster.dataDir, 'server.log');
  const before = readFileSync(log, 'utf8').length;
  await db.query(`ALTER SYSTEM SET auto_explain.sample_rate = 0.02`);
  await db.query('SELECT pg_reload_conf()');
  await load();
  await db.query(`ALTER SYSTEM SET auto_explain.sample_rate = 0`);
  await db.query('SELECT pg_reload_conf()');
  const text = readFileSync(log, 'utf8').slice(before);
  // One plan per distinct statement text.
  const plans = new Map<string, string>();
  for (const block of text.split(/\n(?=\S.*LOG: {2}duration:)/)) {
    const q = /Query Text: ([\s\S]*?)\n[^\n]*\((?:cost=|actual)/.exec(block);
    const key = (q?.[1] ?? block.slice(0, 200)).replace(/\s+/g, ' ').slice(0, 160);
    if (!plans.has(key)) plans.set(key, block);
  }
  const file = join(OUT, `${phase}-plans.txt`);
  writeFileSync(file, [...plans.values()].join('\n\n'));
  return { file, count: plans.size };
}

// Field `n` (1-based, n > 2) of /proc/<pid>/stat.
const statField = (pid: string, n: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[n - 3];

// perf samples only time on a CPU, where the V8 profile's wall-clock samples also catch a thread
// that a busy machine has descheduled inside a system call (writev looks far costlier than it is).
async function perfBoth(phase: string, seconds: number) {
  if (!PERF) return null;
  const pm = cluster.postmasterPid();
  const procs = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const postgres = [pm, ...procs.filter((p) => statField(p, 4) === String(pm)).map(Number)];
  const node = procs.filter((p) => statField(p, 5) === String(server.pid)).map(Number);
  const files = { server: join(OUT, `${phase}-server.perf.data`), postgres: join(OUT, `${phase}-postgres.perf.data`) };
  await Promise.all([perfRecord(node, seconds, files.server), perfRecord(postgres, seconds, files.postgres)]);
  return files;
}

function printPerf(title: string, data: string, rules: Rules, entryPoints: readonly string[] = []) {
  const self = perfSymbols(data, false);
  const lines = [`${title}, perf self time by category (${data}):`];
  for (const [cat, pct] of categorise(self, rules)) if (pct >= 0.5) lines.push(`  ${pct.toFixed(1).padStart(5)}%  ${cat}`);
  lines.push(`${title}, perf top symbols:`);
  for (const [sym, pct] of [...self.entries()].sort((x, y) => y[1] - x[1]).slice(0, 15))
    lines.push(`  ${pct.toFixed(1).padStart(5)}%  ${sym.slice(0, 120)}`);
  if (entryPoints.length) {
    lines.push(`${title}, perf inclusive time of entry points:`);
    for (const [sym, pct] of inclusiveOf(perfSymbols(data, true), entryPoints)) lines.push(`  ${pct.toFixed(1).padStart(5)}%  ${sym}`);
  }
  writeFileSync(data.replace(/\.data$/, '.txt'), lines.join('\n'));
  console.log(lines.join('\n'));
}

async function profilePhase(phase: string, cycle: (c: number, s: number) => Promise<number>) {
  await drive(CLIENTS, 2, cycle); // warm the JIT, the plan caches and the pool
  await db.query('SELECT pg_stat_statements_reset()');
  await inspector.startProfile();
  const perf = perfBoth(phase, SECONDS);
  const sys0 = groupSystemSeconds(server.pid);
  const { out: cell, cpu } = await meter.window(() => drive(CLIENTS, SECONDS, cycle));
  const sys = groupSystemSeconds(server.pid) - sys0;
  const profile = await inspector.stopProfile();
  const perfFiles = await perf;
  writeFileSync(join(OUT, `${phase}.cpuprofile`), JSON.stringify(profile));
  const s = summarise(profile);
  console.log(
    `\n=== ${phase}: ${fmt(rate(cell))} msgs/s, server ${perMsg(cpu.server, cell.msgs).toFixed(1)} µs/msg (of which kernel ${perMsg(sys, cell.msgs).toFixed(1)}), PostgreSQL ${perMsg(cpu.postgres, cell.msgs).toFixed(1)} µs/msg ===`,
  );
  console.log(`server self time by place (busy ${s.busyMs.toFixed(0)} ms of ${SECONDS * 1000} ms):`);
  for (const l of formatShares(s.places.slice(0, 18))) console.log(`  ${l}`);
  console.log('server self time by function:');
  for (const l of formatShares(s.functions)) console.log(`  ${l}`);
  console.log('socket writes (writev) by caller:');
  for (const l of formatShares(callersOf(profile, 'writev'))) console.log(`  ${l}`);
  console.log(`PostgreSQL statements (pg_stat_statements, track = all; nested times are inside their caller's):`);
  for (const l of await statements()) console.log(`  ${l}`);
  const plans = await explainSample(phase, () => drive(CLIENTS, 2, cycle));
  console.log(`auto_explain: ${plans.count} distinct statements with ANALYZE, BUFFERS in ${plans.file}`);
  if (perfFiles) {
    printPerf('server', perfFiles.server, SERVER_RULES);
    printPerf('PostgreSQL', perfFiles.postgres, POSTGRES_RULES, POSTGRES_ENTRY_POINTS);
  }
}

try {
  // A backlog for the pop phase, pushed before any profile window.
  if (phases.includes('pop')) await fill(base, 'consume', 240_000);
  if (phases.includes('push')) await profilePhase('push', pushCycle(base, 'bench'));
  if (phases.includes('pop')) await profilePhase('pop', popCycle(base, 'consume'));
  console.log(`\n(${CLIENTS} clients x batch ${BATCH}; profiles in ${OUT}; open a .cpuprofile in Chrome DevTools or speedscope)`);
} finally {
  inspector.close();
  await db.end();
  await server.stop();
  cluster.stop();
}
