// The commands that talk to the database itself (DATABASE_URL): migrate it the way the deploy
// does, say whether it is migrated, and run retention once the way the cron does.
import { parseArgs } from 'node:util';
import runScheduledRetention from '../functions/retention.js';
import type { Env } from '../lib/config.js';
import type { Database } from '../lib/db/types.js';
import { appliedMigration, EXPECTED_MIGRATION } from '../lib/db/schema-version.js';
import { connectDeployed, directUrl, schemaGuard } from '../lib/http/runtime/database.js';
import { migrateDeployed } from '../lib/http/runtime/migrations.js';
import { CliError } from './errors.js';

export const MIGRATE_USAGE = `queen-serverless migrate [--check]
  Applies drizzle/ to DATABASE_URL over the direct endpoint (a Neon -pooler host is turned into the
  direct one), as \`sst deploy\` does. --check only says whether the schema is current (exit 1 if not).`;

export const RETENTION_USAGE = `queen-serverless retention
  Runs retention once on DATABASE_URL, as the scheduled job does, and prints what it deleted.`;

export async function migrateCommand(args: string[], env: Env, print: (line: string) => void = console.log): Promise<void> {
  const { values } = parseArgs({ args, options: { check: { type: 'boolean', default: false } } });
  const url = requireUrl(env);
  if (!values.check) {
    const report = await reach(url, () => migrateDeployed(url));
    print(`migrated ${report.host}: ${report.applied} migration(s) applied, schema at ${report.migration} (this code needs ${EXPECTED_MIGRATION})`);
    return;
  }
  const applied = await withDatabase(directUrl(url), appliedMigration);
  if (applied !== null && applied >= EXPECTED_MIGRATION) {
    print(`schema is current: migration ${applied}`);
    return;
  }
  throw new CliError(`schema is ${applied === null ? 'not migrated' : `at migration ${applied}`}; this code needs ${EXPECTED_MIGRATION}: run queen-serverless migrate`, 1);
}

export async function retentionCommand(args: string[], env: Env, print: (line: string) => void = console.log): Promise<void> {
  parseArgs({ args, options: {} });
  const url = requireUrl(env);
  const report = await withDatabase(url, async (db) => {
    await schemaGuard()(db);
    return runScheduledRetention(db, print);
  });
  print(`deleted ${report.segmentsDeleted} segment(s) holding ${report.messagesDeleted} message(s) in ${report.queues.length} queue(s); purged ${report.sidecarRowsPurged} sidecar row(s)`);
}

function requireUrl(env: Env): string {
  if (!env.DATABASE_URL) throw new CliError('DATABASE_URL is not set: export the database URL (for Neon, the pooled or the direct one)');
  try {
    new URL(env.DATABASE_URL);
  } catch {
    throw new CliError('DATABASE_URL is not a URL: expected postgres://user:password@host/database');
  }
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
    throw new CliError(`${new URL(url).host}: ${e.message || e.code || String(err)}`, 1);
  }
}
