// The commands that talk to the database itself (DATABASE_URL, else npm start's ./.queen): migrate
// it the way the deploy does, say whether it is migrated, and run retention once the way the cron does.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import runScheduledRetention from '../functions/retention.js';
import type { Env } from '../lib/config.js';
import type { Database } from '../lib/db/types.js';
import { shippedMigrations } from '../lib/db/schema-version.js';
import { connect, databaseHost, isDatabaseUrl } from '../lib/db/client.js';
import { MigrationError, migrateWithReport, readMigrations } from '../lib/db/migrate.js';
import { QueenError } from '../lib/errors.js';
import { DataDirLocked, lockDataDir } from '../lib/http/runtime/data-dir-lock.js';
import { connectDeployed, directUrl, schemaGuard } from '../lib/http/runtime/database.js';
import { migrateDeployed } from '../lib/http/runtime/migrations.js';
import { CliError } from './errors.js';

export const MIGRATE_USAGE = `queen-serverless migrate [--check]
  Applies drizzle/ to DATABASE_URL over the direct endpoint (a Neon -pooler host is turned into the
  direct one), as \`sst deploy\` does; without DATABASE_URL, to npm start's ./.queen (PGlite) while no
  server uses it. --check only says whether the schema is current (exit 1 if not).`;

export const RETENTION_USAGE = `queen-serverless retention
  Runs retention once on DATABASE_URL (or ./.queen without it), as the scheduled job does, and
  prints what it deleted.`;

const LOCAL = '.queen';

export async function migrateCommand(args: string[], env: Env, print: (line: string) => void = console.log): Promise<void> {
  const { values } = parseArgs({ args, options: { check: { type: 'boolean', default: false } } });
  if (!env.DATABASE_URL) {
    await withLocalDatabase(async (db, dir) => {
      if (values.check) return checkSchema(db, print);
      const report = await migrateWithReport(db).catch((err: unknown) =>
        Promise.reject(err instanceof MigrationError ? new CliError(err.message, 1) : err),
      );
      const latest = readMigrations().at(-1)!.tag;
      print(`migrated ${dir} (PGlite): ${report.applied.length} migration(s) applied, schema at ${schemaAt(report, latest)}`);
    });
    return;
  }
  const url = requireUrl(env);
  if (!values.check) {
    const report = await reach(url, () => migrateDeployed(url));
    const repaired = report.repaired.length ? `, ${report.repaired.length} superseded migration(s) brought up to date` : '';
    print(
      `migrated ${report.host}: ${report.applied.length} migration(s) applied${repaired}, schema at ${schemaAt(report, report.migration)}`,
    );
    return;
  }
  await withDatabase(directUrl(url), (db) => checkSchema(db, print));
}

const schemaAt = (report: { ahead: number }, newest: string | null) =>
  report.ahead ? `${newest} and ${report.ahead} newer migration(s) this version does not have (a rollback: nothing to do)` : newest;

// The same check a deployed function makes on its cold start.
async function checkSchema(db: Database, print: (line: string) => void): Promise<void> {
  try {
    await schemaGuard()(db);
  } catch (err) {
    if (err instanceof QueenError) throw new CliError(`${err.code}: ${err.message}`, 1);
    throw err;
  }
  print(`schema is current: migration ${shippedMigrations().at(-1)!.tag}`);
}

export async function retentionCommand(args: string[], env: Env, print: (line: string) => void = console.log): Promise<void> {
  parseArgs({ args, options: {} });
  const retain = async (db: Database) => {
    await schemaGuard()(db);
    return runScheduledRetention(db, print);
  };
  const report = env.DATABASE_URL ? await withDatabase(requireUrl(env), retain) : await withLocalDatabase(retain);
  print(
    `deleted ${report.segmentsDeleted} segment(s) holding ${report.messagesDeleted} message(s) in ${report.queues.length} queue(s); ` +
      `purged ${report.sidecarRowsPurged} sidecar row(s)`,
  );
}

// npm start's PGlite, under its lock: PGlite is one process's database (lib/http/runtime/data-dir-lock.ts).
async function withLocalDatabase<T>(run: (db: Database, dir: string) => Promise<T>): Promise<T> {
  const dir = resolve(LOCAL);
  if (!existsSync(dir)) {
    throw new CliError(
      `DATABASE_URL is not set and there is no ./${LOCAL} here: set DATABASE_URL=postgres://user:password@host/database, ` +
        'or run this in the folder where npm start keeps its data',
    );
  }
  let lock;
  try {
    lock = lockDataDir(dir);
  } catch (err) {
    if (err instanceof DataDirLocked)
      throw new CliError(`${err.message} A running npm start migrates at boot and runs retention itself.`, 1);
    throw err;
  }
  try {
    const db = await connect({ dataDir: dir });
    try {
      return await run(db, `./${LOCAL}`);
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}

function requireUrl(env: Env): string {
  if (!env.DATABASE_URL) throw new CliError('DATABASE_URL is not set: export the database URL (for Neon, the pooled or the direct one)');
  if (!isDatabaseUrl(env.DATABASE_URL))
    throw new CliError(
      'DATABASE_URL is not a URL: expected postgres://user:password@host/database (or postgres://user@/database?host=/socket/dir)',
    );
  return env.DATABASE_URL;
}

async function withDatabase<T>(url: string, run: (db: Database) => Promise<T>): Promise<T> {
  return reach(url, async () => {
    const db = await connectDeployed(url, { max: 1 });
    try {
      return await run(db);
    } finally {
      await db.close();
    }
  });
}

// A wrong host or password is the operator's to fix: one line that names the host, not a stack.
async function reach<T>(url: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof CliError) throw err;
    const e = err as { message?: string; code?: string };
    throw new CliError(`${databaseHost(url)}: ${e.message || e.code || String(err)}`, 1);
  }
}
