// The fault-injection run (docs/semantics.md#errors-and-availability), by hand (not in the suite): `npx tsx bench/faults.ts`.
// server.ts on a private PostgreSQL cluster; 4 producers and 5 consumers with unique
// transactionIds over two queues, resending after any failure as Queen's clients do; the broker
// killed with kill -9 four times mid-load and restarted; PostgreSQL restarted mid-load with
// -m fast and -m immediate; 2,500 fuzzed requests over every route. Prints what was lost, stored
// twice or delivered under a live lease, the status histogram and the deadlocks in both logs;
// exits 1 if any of them is not zero. FAULT_SEED, FAULT_FUZZ and FAULT_PORT change the run.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { allFunctions } from '../functions/index.js';
import { readConfig } from '../lib/config.js';
import { connect } from '../lib/db/client.js';
import { buildApp } from '../lib/http/app.js';
import { auditLoad, drained } from '../support/audit.js';
import { privateCluster, type StopMode } from '../support/cluster.js';
import { fuzzProblem, requestsFor, routeKey, routesOf, type FuzzRequest } from '../support/fuzz.js';
import { examples, makeFixture, NOT_SUPPORTED } from '../support/fuzz-routes.js';
import { send } from '../support/http.js';
import { Load, Tally, until } from '../support/load.js';
import { ROOT as root } from './lib/server.js';

const SEED = Number(process.env.FAULT_SEED || 20260131);
const FUZZ_REQUESTS = Number(process.env.FAULT_FUZZ || 2500);
const PORT = Number(process.env.FAULT_PORT || 7900);
const LEASE_SECONDS = 5;
const QUEUES = ['faults-a', 'faults-b'];

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const events: string[] = [];
const note = (what: string) => {
  events.push(`${elapsed().padStart(7)}  ${what}`);
  console.log(`[${elapsed()}] ${what}`);
};

const cluster = await privateCluster(Number(process.env.FAULT_PG_PORT || 7950));
const serverLog = join(cluster.dir, 'server.log');
writeFileSync(serverLog, '');
const url = `http://127.0.0.1:${PORT}`;
let server: ChildProcess | undefined;

// One node process (no tsx wrapper), so kill -9 hits the process that serves.
async function startBroker(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'server.ts')], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: cluster.url('queen'), PORT: String(PORT), HOST: '127.0.0.1', RETENTION_INTERVAL: '600000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => appendFileSync(serverLog, d));
  child.stderr!.on('data', (d) => appendFileSync(serverLog, d));
  server = child;
  await until('the broker answers /health', async () => (await send(url, 'GET', '/health')).status === 200, 60_000);
}

try {
  const admin = await connect({ url: cluster.url(), driver: 'pg', max: 1 });
  await admin.query('CREATE DATABASE queen');
  await admin.close();
  await startBroker();
  const db = await connect({ url: cluster.url('queen'), driver: 'pg', max: 2 });
  for (const queue of QUEUES)
    await send(url, 'POST', '/api/v1/configure', JSON.stringify({ queue, options: { leaseTime: LEASE_SECONDS } }));
  note(`broker pid ${server!.pid} on ${url}, PostgreSQL 15 on port ${cluster.port} (${cluster.dir})`);

  const fixture = await makeFixture((m, u, b) => send(url, m, u, b), `s${SEED}`);
  const routes = routesOf(buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => db }));
  const all = examples(fixture);
  const seedBodies = Object.values(all)
    .flatMap((list) => list.map((e) => e.body))
    .filter((b) => b !== undefined);
  // A route documented to answer 501 not_supported may (test/http/fuzz.test.ts allows it the same way).
  const perRoute = routes.map((r) =>
    fc
      .sample(requestsFor(r, all[routeKey(r)] ?? [], seedBodies), { seed: SEED, numRuns: Math.ceil(FUZZ_REQUESTS / routes.length) })
      .map((req) => ({ ...req, notSupported: NOT_SUPPORTED.has(routeKey(r)) })),
  );
  const fuzzed: (FuzzRequest & { notSupported: boolean })[] = [];
  for (let i = 0; fuzzed.length < FUZZ_REQUESTS; i++)
    for (const list of perRoute) if (list[i] && fuzzed.length < FUZZ_REQUESTS) fuzzed.push(list[i]!);

  const load = new Load({
    url,
    run: `f${SEED}-${Date.now().toString(36)}`,
    queues: QUEUES,
    producers: 4,
    consumers: 5,
    partitions: 6,
    leaseSeconds: LEASE_SECONDS,
  });
  const fuzzTally = new Tally();
  const fuzzProblems: string[] = [];
  let fuzzDone = 0;
  // The fuzz runs beside the load, three at a time; a request that got no answer (the broker was
  // down) is resent.
  let nextFuzz = 0;
  const fuzzWorker = async () => {
    for (let req = fuzzed[nextFuzz++]; req; req = fuzzed[nextFuzz++]) {
      let answer = await send(url, req.method, req.url, req.body);
      for (let i = 0; answer.status === 0 && i < 300; i++) {
        await new Promise((r) => setTimeout(r, 200));
        answer = await send(url, req.method, req.url, req.body);
      }
      fuzzTally.record(req.method, answer);
      const problem =
        fuzzProblem(answer, { databaseMayBeAway: true, notSupported: req.notSupported }) ??
        (req.mustRefuse && answer.status < 400 ? `answered ${answer.status} to a body that is not an object` : null);
      if (problem) fuzzProblems.push(`${req.method} ${req.url} (${req.how}) body ${JSON.stringify(req.body?.slice(0, 200))}: ${problem}`);
      fuzzDone++;
    }
  };
  const fuzzing = Promise.all([fuzzWorker(), fuzzWorker(), fuzzWorker()]);

  const progressed = async (what: string) => {
    const p0 = load.progress();
    await until(what, () => load.progress().pushes >= p0.pushes + 80 && load.progress().acks >= p0.acks + 40, 180_000);
  };
  const kill = async (n: number) => {
    const pid = server!.pid;
    const exited = new Promise((r) => server!.once('exit', r));
    process.kill(pid!, 'SIGKILL');
    await exited;
    const t = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    await startBroker();
    note(`kill -9 #${n} of broker pid ${pid}; restarted as pid ${server!.pid}, serving again after ${Date.now() - t} ms`);
  };
  const restartPg = async (mode: StopMode) => {
    const t = Date.now();
    await cluster.restart(mode, 500);
    note(`PostgreSQL restarted with -m ${mode} (down and up in ${Date.now() - t} ms)`);
  };

  await progressed('the load is running');
  const faults: (() => Promise<void>)[] = [
    () => kill(1),
    () => kill(2),
    () => restartPg('fast'),
    () => kill(3),
    () => restartPg('immediate'),
    () => kill(4),
  ];
  for (const fault of faults) {
    await fault();
    await progressed('pushes and acks succeed after the fault');
  }
  await until(`the ${fuzzed.length} fuzzed requests are sent`, () => fuzzDone === fuzzed.length, 600_000);
  await fuzzing;
  await load.stopProducing();
  note(`producers stopped: ${load.pushed.size} push items answered 201`);
  await until('the consumers drained both queues', () => drained(db, QUEUES), 300_000);
  await load.stopConsuming();
  note('consumers drained both queues');

  const report = await auditLoad(db, load);
  const pgLog = await cluster.log();
  const brokerLog = readFileSync(serverLog, 'utf8');
  const deadlocks = (text: string) => text.split('\n').filter((l) => /40P01|deadlock detected/.test(l));
  // PostgreSQL says which statements deadlocked in the DETAIL, CONTEXT and STATEMENT lines after.
  const deadlockReports = (text: string) => {
    const entries = text.split(/\n(?=\d{4}-\d{2}-\d{2} )/);
    const out: string[] = [];
    entries.forEach((entry, i) => {
      if (!/deadlock detected/.test(entry)) return;
      out.push(entry);
      for (let j = i + 1; j < entries.length && /^\S+ \S+ \S+ \[\d+\] (DETAIL|HINT|CONTEXT|STATEMENT)/.test(entries[j]!); j++)
        out.push(entries[j]!);
    });
    return out;
  };
  // 501 not_supported is the designed answer of the routes we do not serve (streams, migration
  // actions), counted apart.
  const fiveHundreds = (t: Tally) => t.count((_, s) => /^5/.test(s) && s !== '503' && s !== '501');
  const notSupported = (t: Tally) => t.count((_, s) => s === '501');
  const unavailable = (t: Tally) => t.count((_, s) => s === '503');
  const [srvDeadlocks, pgDeadlocks] = [deadlocks(brokerLog), deadlocks(pgLog)];
  const retriedPushes = load.tally.count((r, s) => (r === 'push' || r === 'transaction') && (s === '503' || s === 'no-answer'));

  const lines = [
    '',
    `fault run, seed ${SEED}: 4 producers, 5 consumers over ${QUEUES.join(', ')} (6 partitions each, leaseTime ${LEASE_SECONDS} s); ${fuzzed.length} fuzzed requests over ${routes.length} routes`,
    'events:',
    ...events.map((e) => `  ${e}`),
    `load requests: ${load.tally.count(() => true)} (${load.tally.dropped.length} without an answer while the broker was down)`,
    ...load.tally.histogram().map((l) => `  ${l}`),
    `fuzz requests: ${fuzzTally.count(() => true)}`,
    ...fuzzTally.histogram().map((l) => `  ${l}`),
    `acknowledged messages lost:        ${report.lost.length} (of ${report.acknowledgedPushes} push items answered 201; ${report.stored} stored)`,
    `stored twice:                      ${report.storedTwice.length}`,
    `offsets contiguous:                ${report.gaps.length === 0 ? 'yes' : `NO: ${report.gaps.slice(0, 5).join('; ')}`}`,
    `dedup held across crashes:         ${report.storedTwice.length === 0 ? 'yes' : 'NO'} (${load.duplicatesOnRetry} items of resent pushes answered duplicate with the original offset; ${retriedPushes} push answers were 503 or none)`,
    `delivered under a live lease:      ${report.underLiveLease.length}`,
    `delivered again after a good ack:  ${report.redeliveredAfterAck.length}`,
    `stored but never delivered:        ${report.undelivered.length}`,
    `5xx other than 503 and 501:        ${fiveHundreds(load.tally) + fiveHundreds(fuzzTally)} (503 database_unavailable: ${unavailable(load.tally) + unavailable(fuzzTally)}, each with Retry-After unless listed below; 501 not_supported from the unsupported routes: ${notSupported(load.tally) + notSupported(fuzzTally)})`,
    `wrong answers (load):              ${load.tally.wrong.length}`,
    ...load.tally.wrong.slice(0, 20).map((w) => `  ${w}`),
    `fuzz problems:                     ${fuzzProblems.length}`,
    ...fuzzProblems.slice(0, 20).map((p) => `  ${p}`),
    `deadlocks (40P01): server log ${srvDeadlocks.length}, PostgreSQL log ${pgDeadlocks.length}`,
    ...srvDeadlocks.slice(0, 5).map((l) => `  ${l.slice(0, 300)}`),
    ...deadlockReports(pgLog)
      .slice(0, 12)
      .map((l) => `  ${l.slice(0, 1500)}`),
    `duration: ${elapsed()}`,
  ];
  console.log(lines.join('\n'));
  const details = {
    lost: report.lost,
    storedTwice: report.storedTwice,
    underLiveLease: report.underLiveLease,
    redelivered: report.redeliveredAfterAck,
    undelivered: report.undelivered,
  };
  for (const [name, list] of Object.entries(details)) if (list.length > 0) console.log(`${name}:\n  ${list.slice(0, 10).join('\n  ')}`);
  const failed =
    report.lost.length +
    report.storedTwice.length +
    report.gaps.length +
    report.underLiveLease.length +
    report.redeliveredAfterAck.length +
    report.undelivered.length +
    load.tally.wrong.length +
    fuzzProblems.length +
    srvDeadlocks.length +
    pgDeadlocks.length +
    fiveHundreds(load.tally) +
    fiveHundreds(fuzzTally);
  await db.close();
  process.exitCode = failed > 0 ? 1 : 0;
} finally {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (process.env.FAULT_KEEP) {
    await cluster.stop('fast');
    console.log(`kept the cluster's directory and logs: ${cluster.dir}`);
  } else await cluster.dispose();
}
