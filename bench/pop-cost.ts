// What one wildcard pop costs PostgreSQL, in CPU, in the shape of Queen's benchmark consumer
// (batch 100, autoAck, one partition a pop) on a queue of 1,001 partitions that are all written
// every second or two. One connection pushes a message to a random partition, another pops; the
// pop connection's backend CPU is read from /proc over the whole run, so other work on the machine
// is not charged to it (no contention, no lock waits: the statement's own work).
//   npx tsx bench/pop-cost.ts                       (BENCH_POPS=4000 pops per case, ~30 s)
// BENCH_PUSHES_PER_POP: messages pushed between two pops (2, what Queen's consumer takes a pop at 1
// message a push). Also measured: a pop that finds nothing (what a waiting consumer polls).
// BENCH_SQL: SQL run once after migrating, to try a change of a function before writing its migration.
// Needs PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) on
// this machine (its backends' /proc); it creates and drops its own database.
import { allFunctions } from '../functions/index.js';
import { readConfig } from '../lib/config.js';
import { connect } from '../lib/db/client.js';
import { migrate } from '../lib/db/migrate.js';
import { buildApp } from '../lib/http/app.js';
import { treeCpuSeconds } from './lib/cpu.js';
import { startCluster } from './lib/postgres.js';
import { inProcess, jsonCall } from '../support/http.js';

// BENCH_STATEMENTS=1: on a private PostgreSQL with pg_stat_statements (track = all, planning too),
// also each statement's execution and planning time a pop (one connection: no waiting in them).
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
const cluster = STATEMENTS ? startCluster({ port: 7263, statements: true, settings: { 'pg_stat_statements.track_planning': 'on' } }) : null;
const ADMIN = cluster?.url('postgres') ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const POPS = Number(process.env.BENCH_POPS ?? 4000);
const PUSHES_PER_POP = Number(process.env.BENCH_PUSHES_PER_POP ?? 2);
const PARTITIONS = 1001;
const QUEUE = 'bench-pop-cost';

const dbName = `queen_popcost_${process.pid}`;
const url = Object.assign(new URL(ADMIN), { pathname: `/${dbName}` }).toString();
const admin = await connect({ url: ADMIN, driver: 'pg', max: 1 });
await admin.query(`CREATE DATABASE ${dbName}`);

/** An in-process app on a pool of one connection, and that connection's backend pid. */
async function oneConnectionApp() {
  const db = await connect({ url, driver: 'pg', max: 1 });
  const [row] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const app = buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => db, log: (m, e) => console.error(m, e) });
  return { db, pid: row!.pid, call: jsonCall(inProcess(app)) };
}

try {
  const setup = await connect({ url, driver: 'pg', max: 1 });
  await migrate(setup);
  if (STATEMENTS) await setup.query('CREATE EXTENSION pg_stat_statements');
  if (process.env.BENCH_SQL) await setup.query(process.env.BENCH_SQL);
  await setup.close();
  const producer = await oneConnectionApp();
  const consumer = await oneConnectionApp();
  const pushOne = async (p: number) => {
    const items = [{ queue: QUEUE, partition: `${p}`, payload: { message: 'Hello World', partition_id: p } }];
    const res = await producer.call('POST', '/api/v1/push', { items });
    if (res.status !== 201) throw new Error(`push: ${res.status} ${res.text}`);
  };
  /** One pop as Queen's consumer makes it; returns how many messages it delivered. */
  const popOne = async () => {
    const res = await consumer.call<{ messages: unknown[] }>('GET', `/api/v1/pop/queue/${QUEUE}?batch=100&autoAck=true`);
    if (res.status !== 200 && res.status !== 204) throw new Error(`pop: ${res.status} ${res.text}`);
    return res.status === 204 ? 0 : res.body.messages.length;
  };

  // Every partition and its cursor exists, as after the runner's first walk.
  for (let p = 0; p < PARTITIONS; p++) await pushOne(p);
  while ((await popOne()) > 0);

  const measure = async (name: string, pushes: number) => {
    let delivered = 0;
    let pops = 0;
    const before = treeCpuSeconds(consumer.pid);
    const started = performance.now();
    for (let i = 0; i < POPS; i++) {
      for (let k = 0; k < pushes; k++) await pushOne(Math.floor(Math.random() * PARTITIONS));
      delivered += await popOne();
      pops++;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = treeCpuSeconds(consumer.pid) - before;
    console.log(
      `${name}: ${pops} pops in ${seconds.toFixed(1)} s, ${(delivered / pops).toFixed(2)} messages a pop, ` +
        `PostgreSQL CPU ${((cpu / pops) * 1e6).toFixed(0)} µs a pop (the pop connection's backend, from /proc)`,
    );
  };
  if (STATEMENTS) await consumer.db.query('SELECT pg_stat_statements_reset()');
  await measure(`${PUSHES_PER_POP} pushes, then a pop`, PUSHES_PER_POP);
  if (STATEMENTS) {
    const rows = await consumer.db.query<{ calls: string; exec: number; plan: number; q: string }>(
      `SELECT calls, total_exec_time AS exec, total_plan_time AS plan, regexp_replace(query, '\\s+', ' ', 'g') AS q
         FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE '%push_segments%'
        ORDER BY total_exec_time + total_plan_time DESC LIMIT 24`,
    );
    console.log('  µs a pop: execution, planning, calls a pop (pushes left out)');
    for (const r of rows)
      console.log(
        `  ${((r.exec * 1000) / POPS).toFixed(1).padStart(7)} ${((r.plan * 1000) / POPS).toFixed(1).padStart(6)} ${(Number(r.calls) / POPS).toFixed(2).padStart(5)}  ${r.q.slice(0, 110)}`,
      );
  }
  // Nothing new: what each poll of a waiting consumer costs while the queue is written elsewhere.
  await measure('a pop that finds nothing', 0);
  await producer.db.close();
  await consumer.db.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.close();
  cluster?.stop();
}
