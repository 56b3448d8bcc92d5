// Push throughput and latency against the local PostgreSQL, with pg-boss's batch insert in the same
// run as the peer, and the dedup probe with an empty versus a 1,000,000-hash window.
//   npx tsx bench/push.ts            (BENCH_SECONDS=3 per cell; about 1.5 minutes)
// Creates and drops its own database. The HTTP server runs in a child process (its own core).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import PgBoss from 'pg-boss';
import { pushItems, type PushItem } from '../lib/broker/push.js';
import { readConfig } from '../lib/config.js';
import { connect } from '../lib/db/client.js';
import type { Database } from '../lib/db/types.js';
import { migrate } from '../lib/db/migrate.js';
import { request } from '../support/http.js';
import { drive as driveFor, pct, rate, type Cell } from './lib/load.js';
import { payloadOf } from './lib/payload.js';

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const PORT = 7201;
const BASE = new URL(`http://127.0.0.1:${PORT}`);
// QUEEN_V2_ZSTD_LEVEL and the other QUEEN_* settings apply here and in the server child.
const config = readConfig(process.env, { auth: 'none' });
const ctx = { tenant: 'default', sub: null, config };
const encoder = new TextEncoder();

// `clients` loops each sending batches of `batch` for SECONDS.
const drive = (clients: number, batch: number, send: (client: number, seq: number) => Promise<void>): Promise<Cell> =>
  driveFor(clients, SECONDS, async (c, seq) => (await send(c, seq), batch));

const fmt = (c: Cell) =>
  `${Math.round(rate(c)).toString().padStart(7)} msgs/s  p50 ${pct(c.latencies, 50).toFixed(2).padStart(6)} ms  p99 ${pct(c.latencies, 99).toFixed(2).padStart(7)} ms`;

// Client-chosen transactionIds by default (every frame is probed for duplicates); with
// minted = true the broker mints them, and a minted id needs no probe.
function brokerItems(queue: string, partition: string, batch: number, seq: number, minted = false): PushItem[] {
  return Array.from({ length: batch }, (_, i) => ({
    queue,
    partition,
    payload: encoder.encode(payloadOf(seq * batch + i)),
    transactionId: minted ? null : `${partition}-${seq}-${i}`,
    traceId: null,
  }));
}

function httpBody(queue: string, partition: string, batch: number, seq: number, minted = false): string {
  const items = Array.from(
    { length: batch },
    (_, i) =>
      `{"queue":"${queue}","partition":"${partition}","payload":${payloadOf(seq * batch + i)}${minted ? '' : `,"transactionId":"${partition}-${seq}-${i}"`}}`,
  );
  return `{"items":[${items.join(',')}]}`;
}

async function post(body: string): Promise<void> {
  const reply = await request(BASE, 'POST', '/api/v1/push', body);
  if (reply.status !== 201) throw new Error(`push answered ${reply.status}: ${reply.text}`);
}

async function startServer(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', url, String(PORT)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
    child.on('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return child;
}

async function serve(url: string, port: number) {
  const { serve: listen } = await import('@hono/node-server');
  const { buildApp } = await import('../lib/http/app.js');
  const { default: push } = await import('../functions/push.js');
  const db = await connect({ url, driver: 'pg', max: 20 });
  const app = buildApp([push], { config, database: () => db });
  const server = listen({ fetch: app.fetch, port }, () => console.log('listening'));
  // Cells of the other systems leave the connections idle for longer than Node's 5 s default.
  (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = 600_000;
}

async function prefillWindow(db: Database, partitionId: string, hashes: number) {
  const rows = hashes / 100;
  const [idx] = await db.query<{ def: string }>(`SELECT indexdef AS def FROM pg_indexes WHERE indexname = 'idx_log_txns_keys'`);
  await db.query('DROP INDEX queen.idx_log_txns_keys');
  await db.query(
    `INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
     SELECT $1, 1e9::bigint + r * 100, 1e9::bigint + r * 100 + 99, now(),
            (SELECT string_agg(decode(md5(r || ':' || i), 'hex'), ''::bytea) FROM generate_series(0, 99) i)
       FROM generate_series(0, $2::int - 1) r`,
    [partitionId, rows],
  );
  await db.query(idx!.def);
  await db.query('UPDATE queen.log_partitions SET last_offset = 2e9::bigint WHERE id = $1', [partitionId]);
  await db.query('ANALYZE queen.log_txns');
}

async function main() {
  const name = `queen_bench_push_${process.pid}`;
  const admin = await connect({ url: ADMIN_URL, driver: 'pg', max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = await connect({ url: url.toString(), driver: 'pg', max: 20 });
  let server: ChildProcess | undefined;
  const boss = new PgBoss({ connectionString: url.toString(), max: 20 });
  try {
    await migrate(db);
    server = await startServer(url.toString());
    boss.on('error', (e) => console.error('pg-boss', e));
    await boss.start();
    await boss.createQueue('bench');

    console.log(
      `push benchmark: ${SECONDS} s per cell, ~200-byte JSON payloads, client c pushes to partition p<c>, client transactionIds, dedup window 3600 s (probe on), zstd level ${config.zstdLevel}`,
    );
    console.log('pg-boss 10.4.2: boss.insert([{name, data}] x batch), same database, same run\n');
    const table: string[] = [];
    for (const batch of [1, 10, 100]) {
      for (const clients of [1, 16]) {
        const viaHttp = await drive(clients, batch, (c, seq) => post(httpBody(`http-${batch}`, `p${c}`, batch, seq)));
        const broker = await drive(clients, batch, async (c, seq) => {
          await pushItems(db, ctx, brokerItems(`broker-${batch}`, `p${c}`, batch, seq));
        });
        const pgboss = await drive(clients, batch, async (_c, seq) => {
          await boss.insert(Array.from({ length: batch }, (_, i) => ({ name: 'bench', data: JSON.parse(payloadOf(seq * batch + i)) })));
        });
        table.push(
          `batch ${String(batch).padStart(3)} x ${String(clients).padStart(2)} clients | http ${fmt(viaHttp)} | broker ${fmt(broker)} | pg-boss ${fmt(pgboss)} | http/pg-boss ${(rate(viaHttp) / rate(pgboss)).toFixed(2)}x  broker/pg-boss ${(rate(broker) / rate(pgboss)).toFixed(2)}x`,
        );
        console.log(table.at(-1));
      }
    }

    const mintedHttp = await drive(16, 100, (c, seq) => post(httpBody('http-minted', `p${c}`, 100, seq, true)));
    const mintedBroker = await drive(16, 100, (c, seq) =>
      pushItems(db, ctx, brokerItems('broker-minted', `p${c}`, 100, seq, true)).then(() => {}),
    );
    console.log(`batch 100 x 16 clients, no transactionId (minted ids, no probe) | http ${fmt(mintedHttp)} | broker ${fmt(mintedBroker)}`);

    console.log('\nDedup probe, one partition, broker, batch 100, 4 clients, client transactionIds:');
    const one = async (label: string) => {
      const cell = await drive(4, 100, async (_c, seq) => {
        await pushItems(db, ctx, brokerItems('window', 'Default', 100, seq * 1000 + _c + Math.floor(Math.random() * 1e6) * 1e6));
      });
      console.log(`  ${label.padEnd(52)} ${fmt(cell)}`);
      return rate(cell);
    };
    await pushItems(db, ctx, brokerItems('window', 'Default', 1, 0));
    const [{ id } = { id: '' }] = await db.query<{ id: string }>(
      `SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'window'`,
    );
    const empty = await one('empty window (GIN, fastupdate off)');
    const t0 = performance.now();
    await prefillWindow(db, id, 1_000_000);
    console.log(`  (pre-filled 1,000,000 hashes + GIN rebuild in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const full = await one('1,000,000 hashes in window (GIN, fastupdate off)');
    await db.query('ALTER INDEX queen.idx_log_txns_keys SET (fastupdate = on, gin_pending_list_limit = 64)');
    const fast = await one('1,000,000 hashes in window (GIN, fastupdate on, 64kB)');
    await db.query('ALTER INDEX queen.idx_log_txns_keys SET (fastupdate = on, gin_pending_list_limit = 4096)');
    const fast4 = await one('1,000,000 hashes in window (GIN, fastupdate on, 4MB)');
    await db.query('ALTER INDEX queen.idx_log_txns_keys SET (fastupdate = off)');
    await db.query('ALTER INDEX queen.idx_log_txns_keys RESET (gin_pending_list_limit)');
    await db.query(`UPDATE queen.queues SET dedup_window_seconds = 0 WHERE name = 'window'`);
    const noProbe = await one('dedupWindowSeconds 0 (no probe, GIN upkeep only)');
    await db.query('DROP INDEX queen.idx_log_txns_keys');
    const noIndex = await one('dedupWindowSeconds 0 and no GIN index (no upkeep)');
    console.log(
      `  full/empty cost ratio ${(empty / full).toFixed(2)}x (goal < 2x); fastupdate on (64kB / 4MB) vs off ${(fast / full).toFixed(2)}x / ${(fast4 / full).toFixed(2)}x throughput; GIN upkeep costs ${((1 - noProbe / noIndex) * 100).toFixed(0)}% of push throughput`,
    );
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
    server?.kill();
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.close();
  }
}

if (process.argv[2] === '--serve') await serve(process.argv[3]!, Number(process.argv[4]));
else await main();
