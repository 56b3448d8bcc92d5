// The pg driver's CPU per query in this process, and what our wrapper (lib/db/driver-pg.ts) adds:
// a single-message push's parameters and a one-row answer, 16 concurrent callers on a pool of 10,
// as the server runs it. Client-side CPU only (process.cpuUsage), so PostgreSQL's share and the
// machine's load hardly move it.
//   npx tsx bench/pg-driver.ts           (BENCH_DATABASE_URL, default the shared cluster's postgres)
import pg from 'pg';
import { connectPg } from '../lib/db/driver-pg.js';

const URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const N = Number(process.env.BENCH_QUERIES ?? 6000);
const CONCURRENCY = 16;
// Push-shaped: the twelve parameters of queen.push_segments for one message, one row back.
const TEXT =
  'SELECT $1::text AS kind, cardinality($2::text[]) AS grp, NULL::int AS item, 42::bigint AS partition_id, NULL::bigint AS msg_offset, ' +
  '7::bigint AS base_offset, NULL::bytea AS blob, $3::text[], $4::int[], $5::int[], length($6::bytea), length($7::bytea), $8::boolean[], $9::boolean[], $10::int[], $11::int[], $12::bigint[]';
const params = (): unknown[] => [
  'default',
  ['bench'],
  ['7'],
  [1],
  [120],
  new Uint8Array(120),
  new Uint8Array(16),
  [false],
  [false],
  [],
  [],
  ['-1234567890123456789'],
];

async function measure(name: string, query: () => Promise<unknown>) {
  for (let i = 0; i < 500; i++) await query(); // warm the JIT and the prepared statement
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  let left = N;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await query();
    }),
  );
  const cpu = process.cpuUsage(t0);
  const us = (cpu.user + cpu.system) / N;
  console.log(
    `${name.padEnd(44)} ${us.toFixed(1).padStart(6)} µs CPU/query  ${(N / ((performance.now() - w0) / 1000)).toFixed(0).padStart(6)} queries/s`,
  );
  return us;
}

const pool = new pg.Pool({ connectionString: URL, max: 10 });
const ours = connectPg({ url: URL, max: 10 });
const client = new pg.Client({ connectionString: URL });
await client.connect();
try {
  const floor = await measure('pg Pool.query, named SELECT $1::int (floor)', () =>
    pool.query({ name: 'bench_one', text: 'SELECT $1::int AS n', values: [1] }),
  );
  const raw = await measure('pg Pool.query, unnamed', () => pool.query(TEXT, params()));
  const named = await measure('pg Pool.query, named statement', () => pool.query({ name: 'bench_push', text: TEXT, values: params() }));
  await measure('pg Client.query, named, no pool (1 connection)', () => client.query({ name: 'bench_push', text: TEXT, values: params() }));
  const wrapped = await measure('lib/db/driver-pg.ts query (named, retry wrapper)', () => ours.query(TEXT, params()));
  console.log(
    `\nours on top of pg's named query: ${(wrapped - named).toFixed(1)} µs/query; named vs unnamed: ${(named - raw).toFixed(1)} µs/query; ` +
      `the push's twelve parameters and seven columns over a one-integer query: ${(named - floor).toFixed(1)} µs/query`,
  );
} finally {
  await client.end();
  await pool.end();
  await ours.close();
}
