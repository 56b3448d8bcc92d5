// Per-function Lambda bundles on Node: size, cold start (process spawn → first /health answered,
// → first real request answered) and peak RSS while serving batches of 100, against the local
// PostgreSQL with auth on, one invocation at a time as on Lambda.
//   npx tsx bench/cold-start.ts            (BENCH_DATABASE_URL to use another server)
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect } from '../lib/db/client.js';
import { migrate } from '../lib/db/migrate.js';
import { bundleLambda, bundleWorker } from '../scripts/bundle.js';
import { functionUrlEvent, JWT_SECRET, token } from '../support/lambda.js';

const FAMILIES = ['push', 'pop', 'ack', 'configure', 'dlq'] as const;
const RUNS = 5;
const BATCH = 100;
const REQUESTS = 40;
const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = 'queen_bench_cold_start';

// Runs inside the child: imports the bundle, answers events one by one, reports timings and RSS.
const HARNESS = `
const [bundle, scriptPath] = process.argv.slice(2);
const script = JSON.parse(await (await import('node:fs/promises')).readFile(scriptPath, 'utf8'));
let peak = process.memoryUsage.rss();
const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, 2);
const { handler } = await import(bundle);
const say = (line) => process.stdout.write(JSON.stringify(line) + '\\n');
const invoke = async (event) => {
  const res = await handler(event, {});
  peak = Math.max(peak, process.memoryUsage.rss());
  if (res.statusCode >= 300 && res.statusCode !== 204) throw new Error(res.statusCode + ' ' + res.body);
  return res;
};
await invoke(script.health);
say({ at: 'health' });
await invoke(script.first);
say({ at: 'first' });
for (const event of script.workload) await invoke(event);
clearInterval(sample);
say({ at: 'done', peakRss: peak });
process.exit(0);
`;

interface Script {
  health: unknown;
  first: unknown;
  workload: unknown[];
}

interface Run {
  health: number;
  first: number;
  peakRss: number;
}

async function runOnce(harness: string, bundle: string, scriptPath: string, env: Record<string, string>): Promise<Run> {
  const started = performance.now();
  const child = spawn(process.execPath, [harness, pathToFileURL(bundle).href, scriptPath], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Partial<Run> = {};
  let buffered = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  child.stdout.on('data', (chunk: Buffer) => {
    const now = performance.now() - started;
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, nl)) as { at: string; peakRss?: number };
      buffered = buffered.slice(nl + 1);
      if (line.at === 'health') run.health = now;
      if (line.at === 'first') run.first = now;
      if (line.at === 'done') run.peakRss = line.peakRss;
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0 || run.peakRss === undefined) throw new Error(`${bundle} exited with ${code}: ${stderr}`);
  return run as Run;
}

function nodeBoot(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', () => resolve(performance.now() - started)));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const server = await connect({ url: admin, driver: 'pg', max: 1 });
  await server.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await server.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(admin);
  url.pathname = `/${dbName}`;
  const db = await connect({ url: url.toString(), driver: 'pg', max: 2 });
  await migrate(db);

  const dir = await mkdtemp(join(tmpdir(), 'queen-cold-start-'));
  const harness = join(dir, 'harness.mjs');
  await writeFile(harness, HARNESS);
  const env = { DATABASE_URL: url.toString(), JWT_SECRET, NODE_ENV: 'production' };
  const auth = { authorization: `Bearer ${await token({ role: 'admin', sub: 'bench' })}` };
  const health = functionUrlEvent('GET', '/health');
  const payload = { user: 4711, action: 'checkout', items: [{ sku: 'A-1', qty: 2 }], note: 'x'.repeat(120) };
  const pushEvent = (queue: string, partition: string, n: number) =>
    functionUrlEvent('POST', '/api/v1/push', {
      headers: auth,
      body: { items: Array.from({ length: n }, () => ({ queue, partition, payload })) },
    });

  const scripts: Record<string, (run: number) => Promise<Script>> = {
    push: async (run) => ({
      health,
      first: pushEvent(`bench-push-${run}`, 'p0', 1),
      workload: Array.from({ length: REQUESTS }, (_, i) => pushEvent(`bench-push-${run}`, `p${i % 4}`, BATCH)),
    }),
    pop: async (run) => {
      const queue = `bench-pop-${run}`;
      await pushWith(db, queue, REQUESTS + 1);
      const pop = functionUrlEvent('GET', `/api/v1/pop/queue/${queue}?batch=${BATCH}&autoAck=true`, { headers: auth });
      return { health, first: pop, workload: Array.from({ length: REQUESTS }, () => pop) };
    },
    ack: async (run) => {
      const leases = await leaseBatches(db, `bench-ack-${run}`, REQUESTS + 1);
      const [first, ...rest] = leases.map((l) => functionUrlEvent('POST', '/api/v1/ack/batch', { headers: auth, body: l }));
      return { health, first: first!, workload: rest };
    },
    configure: async () => {
      const list = functionUrlEvent('GET', '/api/v1/resources/queues', { headers: auth });
      return { health, first: list, workload: Array.from({ length: 10 }, () => list) };
    },
    dlq: async () => {
      const list = functionUrlEvent('GET', `/api/v1/dlq?limit=${BATCH}`, { headers: auth });
      return { health, first: list, workload: Array.from({ length: 10 }, () => list) };
    },
  };

  const boot: number[] = [];
  for (let i = 0; i < RUNS; i++) boot.push(await nodeBoot());
  console.log(
    `cold start on Node ${process.version}, ${RUNS} runs per bundle (median), batch ${BATCH}, auth on, PostgreSQL at ${url.host}`,
  );
  console.log(`baseline: \`node -e 0\` starts and exits in ${median(boot).toFixed(0)} ms on this machine`);
  console.log(`the one Cloudflare Worker (every family): ${((await bundleWorker('queen')).bytes / 1024).toFixed(0)} KiB`);
  console.log('bundle      size KiB  → /health ms  → first request ms (best)  peak RSS MB');
  for (const name of FAMILIES) {
    const lambda = await bundleLambda(name);
    const runs: Run[] = [];
    for (let run = 0; run < RUNS; run++) {
      const scriptPath = join(dir, `${name}-${run}.json`);
      await writeFile(scriptPath, JSON.stringify(await scripts[name]!(run)));
      runs.push(await runOnce(harness, lambda.file, scriptPath, env));
    }
    console.log(
      `${name.padEnd(10)} ${(lambda.bytes / 1024).toFixed(0).padStart(9)} ` +
        `${median(runs.map((r) => r.health))
          .toFixed(0)
          .padStart(13)} ${median(runs.map((r) => r.first))
          .toFixed(0)
          .padStart(19)} ` +
        `${`(${Math.min(...runs.map((r) => r.first)).toFixed(0)})`.padStart(6)} ` +
        `${(Math.max(...runs.map((r) => r.peakRss)) / 2 ** 20).toFixed(1).padStart(12)}`,
    );
  }
  console.log('goals: bundle < 1024 KiB, cold start < 300 ms, peak RSS < 128 MB; every bundle also ships zstd.wasm');

  // The largest message the limits allow (QUEEN_MAX_MESSAGE_BYTES, 4 MiB) sizes the Lambda memory.
  const big = { items: [{ queue: 'bench-big', payload: 'y'.repeat(4 * 2 ** 20 - 64) }] };
  const bigPush = functionUrlEvent('POST', '/api/v1/push', { headers: auth, body: big });
  const bigPop = functionUrlEvent('GET', '/api/v1/pop/queue/bench-big?autoAck=true', { headers: auth });
  for (const [name, event] of [
    ['push', bigPush],
    ['pop', bigPop],
  ] as const) {
    const scriptPath = join(dir, `${name}-big.json`);
    await writeFile(scriptPath, JSON.stringify({ health, first: event, workload: [event, event] }));
    const run = await runOnce(harness, (await bundleLambda(name)).file, scriptPath, env);
    console.log(`peak RSS serving 4 MiB messages, ${name}: ${(run.peakRss / 2 ** 20).toFixed(1)} MB`);
  }
  await db.close();
  await server.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await server.close();
  await rm(dir, { recursive: true, force: true });
}

// Setup goes through the same app in-process, so the measured child only serves its own family.
async function appFor() {
  const { buildApp } = await import('../lib/http/app.js');
  const { readConfig } = await import('../lib/config.js');
  const { allFunctions } = await import('../functions/index.js');
  return (db: Awaited<ReturnType<typeof connect>>) =>
    buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => db, log: () => {} });
}

async function pushWith(db: Awaited<ReturnType<typeof connect>>, queue: string, batches: number, partitions = 1) {
  const app = (await appFor())(db);
  for (let i = 0; i < batches; i++) {
    const items = Array.from({ length: BATCH }, (_, j) => ({
      queue,
      partition: `p${i % partitions}`,
      transactionId: `${queue}-${i}-${j}`,
      payload: { i, j },
    }));
    const res = await app.request('/api/v1/push', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    if (res.status !== 201) throw new Error(`setup push: ${res.status} ${await res.text()}`);
  }
}

/** One leased batch of 100 per partition, returned as ack/batch bodies. */
async function leaseBatches(db: Awaited<ReturnType<typeof connect>>, queue: string, count: number) {
  await pushWith(db, queue, count, count);
  const app = (await appFor())(db);
  const bodies = [];
  for (let i = 0; i < count; i++) {
    const res = await app.request(`/api/v1/pop/queue/${queue}/partition/p${i}?batch=${BATCH}`);
    const popped = (await res.json()) as { leaseId: string; messages: { transactionId: string; partitionId: string }[] };
    bodies.push({
      acknowledgments: popped.messages.map((m) => ({
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        leaseId: popped.leaseId,
        status: 'completed',
      })),
    });
  }
  return bodies;
}

await main();
