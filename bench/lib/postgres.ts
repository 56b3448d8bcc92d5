// A private PostgreSQL 15 cluster for benchmarks: its postmaster
// serves only the benchmark, so the CPU read from /proc over it and its children is ours alone.
// Settings follow the shared cluster at 127.0.0.1:5432 (SHOW ALL there): shared_buffers 128MB,
// max_wal_size 1GB, min_wal_size 80MB, fsync and synchronous_commit on, autovacuum off.
// freshDatabase gives a benchmark a migrated database of its own, on this cluster or any other.
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import pg from 'pg';
import { connect } from '../../lib/db/client.js';
import { migrate } from '../../lib/db/migrate.js';
import type { Database } from '../../lib/db/types.js';

const BIN = '/usr/lib/postgresql/15/bin';

export const SHARED_LIKE_SETTINGS: Record<string, string> = {
  shared_buffers: '128MB',
  max_connections: '100',
  max_wal_size: '1GB',
  min_wal_size: '80MB',
  fsync: 'on',
  synchronous_commit: 'on',
  autovacuum: 'off',
  timezone: 'UTC',
  listen_addresses: '127.0.0.1',
};

export interface Cluster {
  port: number;
  dataDir: string;
  url(database: string): string;
  /** The same database over the cluster's Unix socket (in dataDir). */
  socketUrl(database: string): string;
  postmasterPid(): number;
  stop(): void;
}

export interface ClusterOptions {
  port: number;
  /** Added to (and overriding) SHARED_LIKE_SETTINGS, e.g. from BENCH_PG_SETTINGS="a=1,b=2". */
  settings?: Record<string, string>;
  /** Load pg_stat_statements (track = all) for profiling. */
  statements?: boolean;
}

/** Parses "name=value,name=value". */
export function parseSettings(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',').filter(Boolean)) {
    const at = part.indexOf('=');
    if (at <= 0) throw new Error(`BENCH_PG_SETTINGS: "${part}" is not name=value`);
    out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

const asPostgres = (args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });

/** initdb in /tmp/queen-bench-pg-<port> (a stale cluster there is stopped and removed), start it. */
export function startCluster(options: ClusterOptions): Cluster {
  const dataDir = `/tmp/queen-bench-pg-${options.port}`;
  if (existsSync(`${dataDir}/postmaster.pid`)) {
    try {
      asPostgres([`${BIN}/pg_ctl`, '-D', dataDir, '-m', 'immediate', 'stop']);
    } catch {
      // not running: a leftover pid file
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  execFileSync('chown', ['postgres:postgres', dataDir]);
  asPostgres([`${BIN}/initdb`, '-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  const settings: Record<string, string> = {
    ...SHARED_LIKE_SETTINGS,
    port: String(options.port),
    unix_socket_directories: dataDir,
    ...(options.statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {}),
    ...options.settings,
  };
  // In postgresql.conf rather than on the command line, so ALTER SYSTEM can still change them.
  appendFileSync(
    `${dataDir}/postgresql.conf`,
    Object.entries(settings)
      .map(([k, v]) => `${k} = '${v}'\n`)
      .join(''),
  );
  asPostgres([`${BIN}/pg_ctl`, '-D', dataDir, '-l', `${dataDir}/server.log`, '-w', 'start']);
  return {
    port: options.port,
    dataDir,
    url: (database) => `postgres://postgres@127.0.0.1:${options.port}/${database}`,
    socketUrl: (database) => `postgres://postgres@/${database}?host=${encodeURIComponent(dataDir)}&port=${options.port}`,
    postmasterPid: () => Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]),
    stop() {
      try {
        asPostgres([`${BIN}/pg_ctl`, '-D', dataDir, '-m', 'fast', 'stop']);
      } finally {
        if (!process.env.BENCH_KEEP_CLUSTER) rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** Runs fn with a one-connection client to `url`. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops and recreates the database `url` names (through `postgres` on the same server), migrated. */
export async function freshDatabase(url: string, max = 8): Promise<Database> {
  const name = new URL(url).pathname.slice(1);
  const admin = Object.assign(new URL(url), { pathname: '/postgres' }).toString();
  await withClient(admin, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  const db = await connect({ url, driver: 'pg', max });
  await migrate(db);
  return db;
}
