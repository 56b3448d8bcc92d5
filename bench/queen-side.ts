// Side by side with Queen's own server, under Queen's own benchmark runner (unchanged): its producer
// (autocannon, 50 connections, 1,001 partitions, BENCH_SIZES messages a push) and its consumer
// (50 connections, batch 100, wait=true&autoAck=true) at once for BENCH_SECONDS, against our
// server.ts and, when BENCH_QUEEN_SERVER names its binary, against Queen's C++ server; both on one
// private PostgreSQL, one database each. Prints msgs/s pushed and consumed (counted in each
// database), PostgreSQL and server CPU per message pushed (from /proc) and bytes per message.
//   BENCH_QUEEN_SERVER=/path/to/server/bin/queen-server npx tsx bench/queen-side.ts
// BENCH_PROFILE=1: also, for our server, pg_stat_statements (track = all) per window and the V8
// profile by owner (package, lib/ file, GC); BENCH_PERF=1 also `perf` (on-CPU samples) over our
// server's processes by category; BENCH_LOAD=producer runs the producer alone.
// BENCH_BASE_DIR: another checkout's server.ts too ("base", its own database), measured in turn with
// ours, e.g. the commit before a change.
// BENCH_QUEEN_SCHEMA_DIR: the directory holding Queen's `schema/` (default: the binary's ../../lib);
// BENCH_QUEEN_REPO: the queen-mq/queen git directory the runner is read from; BENCH_RUNNER_DIR:
// where it is written with its dependencies (autocannon 8, axios 1; installed once).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { schemaBytes, totalBytes } from './lib/bytes.js';
import { formatShares, summarise } from './lib/cpuprofile.js';
import { Inspector } from './lib/inspector.js';
import { categorise, inclusiveOf, perfRecord, perfSymbols, POSTGRES_ENTRY_POINTS, POSTGRES_RULES, SERVER_RULES } from './lib/perf.js';
import { fmt } from './lib/load.js';
import { Meter, perMsg } from './lib/meter.js';
import { parseSettings, startCluster, withClient } from './lib/postgres.js';
import { prepareRunner, runQueenLoad, startQueenServer } from './lib/queen-runner.js';
import { startServer, type Server } from './lib/server.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
// The same load first, so the 1,001 partitions and their cursors exist before the window.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? '1,10,100').split(',').map(Number);
const QUEEN_BIN = process.env.BENCH_QUEEN_SERVER;
const REPO = process.env.BENCH_QUEEN_REPO ?? '/work/.mirror/queen-mq+queen/repo';
const PROFILE = process.env.BENCH_PROFILE === '1';
const PRODUCER_ONLY = process.env.BENCH_LOAD === 'producer';
const PERF = process.env.BENCH_PERF === '1';
// BENCH_PG_SOCKET=1: every server talks to PostgreSQL over its Unix socket instead of loopback TCP.
const SOCKET = process.env.BENCH_PG_SOCKET === '1';
const INSPECT_PORT = 7232;
const RUNNER = prepareRunner(REPO, process.env.BENCH_RUNNER_DIR ?? '/tmp/queen-runner');

// Messages stored and consumed in a queue, counted where each system keeps them.
const COUNTS = {
  ours: `SELECT (SELECT coalesce(sum(p.last_offset + 1), 0) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1) AS pushed,
                (SELECT coalesce(sum(c.committed + 1), 0) FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
                   JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1) AS consumed`,
  queen: `SELECT (SELECT count(*) FROM queen.messages m JOIN queen.partitions p ON p.id = m.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1) AS pushed,
                 (SELECT coalesce(sum(c.total_messages_consumed), 0) FROM queen.partition_consumers c JOIN queen.partitions p ON p.id = c.partition_id
                    JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1) AS consumed`,
};

interface Side {
  name: 'ours' | 'base' | 'queen';
  /** Where its messages are counted. */
  kind: keyof typeof COUNTS;
  server: Server;
  db: string;
}
interface Row {
  pushed: number;
  consumed: number;
  pushRate: number;
  consumeRate: number;
  pgUs: number;
  serverUs: number;
  bytes: number;
  errors: string;
}

const cluster = startCluster({ port: 7262, statements: PROFILE, settings: parseSettings(process.env.BENCH_PG_SETTINGS) });
const sides: Side[] = [];
const serverUrl = (db: string) => (SOCKET ? cluster.socketUrl(db) : cluster.url(db));
try {
  const BASE_DIR = process.env.BENCH_BASE_DIR;
  for (const db of ['ours', 'queen', ...(BASE_DIR ? ['base'] : [])])
    await withClient(cluster.url('postgres'), (c) => c.query(`CREATE DATABASE ${db}`));
  if (PROFILE) await withClient(cluster.url('ours'), (c) => c.query('CREATE EXTENSION pg_stat_statements'));
  const nodeArgs = [...(PROFILE ? [`--inspect=127.0.0.1:${INSPECT_PORT}`] : []), ...(PERF ? ['--perf-basic-prof-only-functions'] : [])];
  sides.push({
    name: 'ours',
    kind: 'ours',
    db: 'ours',
    server: await startServer({ databaseUrl: serverUrl('ours'), port: 7214, nodeArgs }),
  });
  const inspector = PROFILE ? await Inspector.connect(INSPECT_PORT) : null;
  if (BASE_DIR)
    sides.push({
      name: 'base',
      kind: 'ours',
      db: 'base',
      server: await startServer({ databaseUrl: serverUrl('base'), port: 7216, dir: BASE_DIR }),
    });
  if (QUEEN_BIN) {
    const cwd = process.env.BENCH_QUEEN_SCHEMA_DIR ?? resolve(dirname(QUEEN_BIN), '../../lib');
    sides.push({
      name: 'queen',
      kind: 'queen',
      db: 'queen',
      server: await startQueenServer(
        QUEEN_BIN,
        cwd,
        { port: cluster.port, database: 'queen', ...(SOCKET ? { host: cluster.dataDir } : {}) },
        7215,
      ),
    });
  }
  console.log(
    `Queen's runner from ${REPO} in ${RUNNER}; ${SECONDS} s each; Queen's server: ${QUEEN_BIN ?? 'not given (BENCH_QUEEN_SERVER)'}`,
  );
  if (BASE_DIR) console.log(`base: ${BASE_DIR}`);

  const results = new Map<string, Row>();
  for (const size of SIZES) {
    for (const side of sides) {
      const queue = `bench-${size}`;
      const count = () =>
        withClient(cluster.url(side.db), async (c) => {
          const r = (await c.query(COUNTS[side.kind], [queue])).rows[0];
          return { pushed: Number(r.pushed), consumed: Number(r.consumed), bytes: totalBytes(await schemaBytes(c, 'queen')) };
        });
      if (WARMUP > 0) await runQueenLoad(RUNNER, side.server.base.origin, queue, size, WARMUP, !PRODUCER_ONLY);
      const meter = new Meter(side.server.pid, cluster.postmasterPid());
      const profiling = PROFILE && side.name === 'ours';
      if (profiling) {
        await withClient(cluster.url('ours'), (c) => c.query('SELECT pg_stat_statements_reset()'));
        await inspector!.startProfile();
      }
      const before = await count();
      // perf over the middle of the window, on-CPU only (the V8 profile also samples a thread the
      // machine has descheduled).
      const perfData = `/tmp/queen-side-${side.name}-${size}.perf.data`;
      const pgPerfData = `/tmp/queen-side-postgres-${size}.perf.data`;
      const perfDone =
        PERF && side.name === 'ours'
          ? sleep(1000).then(() =>
              Promise.all([
                perfRecord(groupPids(side.server.pid), SECONDS - 2, perfData),
                perfRecord(treePids(cluster.postmasterPid()), SECONDS - 2, pgPerfData),
              ]),
            )
          : null;
      const { out, cpu } = await meter.window(() => runQueenLoad(RUNNER, side.server.base.origin, queue, size, SECONDS, !PRODUCER_ONLY));
      if (perfDone) {
        await perfDone;
        console.log(`  server on-CPU by category (perf, ${perfData}):`);
        for (const [cat, pct] of categorise(perfSymbols(perfData, false), SERVER_RULES))
          if (pct >= 0.5) console.log(`    ${pct.toFixed(1).padStart(5)}%  ${cat}`);
        console.log(`  PostgreSQL on-CPU by category (perf, ${pgPerfData}):`);
        for (const [cat, pct] of categorise(perfSymbols(pgPerfData, false), POSTGRES_RULES))
          if (pct >= 0.5) console.log(`    ${pct.toFixed(1).padStart(5)}%  ${cat}`);
        console.log('  PostgreSQL inclusive time of entry points:');
        for (const [sym, pct] of inclusiveOf(perfSymbols(pgPerfData, true), POSTGRES_ENTRY_POINTS))
          console.log(`    ${pct.toFixed(1).padStart(5)}%  ${sym}`);
      }
      const after = await count();
      if (profiling) await printProfile(await inspector!.stopProfile(), after.pushed - before.pushed);
      const pushed = after.pushed - before.pushed;
      const consumed = after.consumed - before.consumed;
      const errors = ['producer', 'consumer']
        .map((k) => {
          const r = out[k as 'producer' | 'consumer'];
          return r.errors || r.non2xx || r.timeouts ? `${k}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts` : '';
        })
        .filter(Boolean)
        .join('; ');
      const row: Row = {
        pushed,
        consumed,
        pushRate: pushed / SECONDS,
        consumeRate: consumed / SECONDS,
        pgUs: perMsg(cpu.postgres, pushed),
        serverUs: perMsg(cpu.server, pushed),
        bytes: (after.bytes - before.bytes) / pushed,
        errors,
      };
      results.set(`${side.name}/${size}`, row);
      console.log(
        `${side.name} x${size}: pushed ${fmt(row.pushRate)}/s (producer says ${fmt(out.producer.msgPerSec)}/s, p50 ${out.producer.latency.p50} ms), consumed ${fmt(row.consumeRate)}/s ` +
          `(${fmt(out.consumer.reqPerSec ?? 0)} pops/s), ` +
          `PostgreSQL ${row.pgUs.toFixed(1)} µs/msg, server ${row.serverUs.toFixed(1)} µs/msg, ${row.bytes.toFixed(0)} B/msg${errors ? `; ${errors}` : ''}`,
      );
      await sleep(1000);
    }
  }

  const pair = (size: number, f: (r: Row) => string) => sides.map((s) => f(results.get(`${s.name}/${size}`)!)).join(' / ');
  const other = sides.find((s) => s.name === 'queen') ?? sides.find((s) => s.name === 'base');
  const ratio = (size: number, f: (r: Row) => number) =>
    other ? ` (${(f(results.get(`ours/${size}`)!) / f(results.get(`${other.name}/${size}`)!)).toFixed(2)}x)` : '';
  console.log(
    `\n| messages per push | push msgs/s ${sides.map((s) => s.name).join(' / ')} | consumed msgs/s | PostgreSQL CPU µs per message | server CPU µs per message | bytes per message |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const size of SIZES) {
    console.log(
      `| ${size} | ${pair(size, (r) => fmt(r.pushRate))}${ratio(size, (r) => r.pushRate)} | ${pair(size, (r) => fmt(r.consumeRate))}${ratio(size, (r) => r.consumeRate)} | ` +
        `${pair(size, (r) => r.pgUs.toFixed(1))} | ${pair(size, (r) => r.serverUs.toFixed(1))} | ${pair(size, (r) => r.bytes.toFixed(0))} |`,
    );
  }
} finally {
  for (const s of sides) await s.server.stop();
  cluster.stop();
}

// Per push: PostgreSQL by statement (nested ones inside their caller's time), the server by owner.
async function printProfile(profile: Parameters<typeof summarise>[0], pushed: number) {
  const s = summarise(profile);
  const file = `/tmp/queen-side-${pushed}.cpuprofile`;
  writeFileSync(file, JSON.stringify(profile));
  console.log(`  server self time by owner (busy ${s.busyMs.toFixed(0)} ms; ${file}):`);
  for (const l of formatShares(s.places.slice(0, 16))) console.log(`    ${l}`);
  console.log('  by function:');
  for (const l of formatShares(s.functions.slice(0, 16))) console.log(`    ${l}`);
  const { rows } = await withClient(cluster.url('ours'), (c) =>
    c.query(`SELECT calls, total_exec_time AS ms, toplevel, regexp_replace(query, '\\s+', ' ', 'g') AS q FROM pg_stat_statements
              WHERE query NOT ILIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT ${Number(process.env.BENCH_STATEMENTS ?? 14)}`),
  );
  console.log(`  PostgreSQL statements (pg_stat_statements, track = all), µs per call and per message pushed:`);
  for (const r of rows) {
    const us = Number(r.ms) * 1000;
    console.log(
      `    ${String(r.calls).padStart(7)} calls ${(us / r.calls).toFixed(0).padStart(6)} µs/call ${(us / pushed).toFixed(1).padStart(7)} µs/msg ${r.toplevel ? 'top ' : '    '} ${String(r.q).slice(0, 100)}`,
    );
  }
}

// The processes of a detached child's group (the server and what it spawned).
function groupPids(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')[2] === String(pgid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

// PostgreSQL's postmaster and its children (the backends).
function treePids(root: number): number[] {
  const ppid = (p: string) => {
    try {
      return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')[1];
    } catch {
      return '';
    }
  };
  return [
    root,
    ...readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p) && ppid(p) === String(root))
      .map(Number),
  ];
}
