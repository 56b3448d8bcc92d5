// The database of a deployed function: node-postgres or the Neon driver, never PGlite, imported
// directly (not through connect()) so the function bundles leave the embedded database out.
import { chooseDriver } from '../../db/client.js';
import type { Database, DriverName } from '../../db/types.js';
import {
  appliedHashes,
  checkMigrations,
  describeStale,
  describeUnknown,
  shippedMigrations,
  type Migration,
} from '../../db/schema-version.js';
import { QueenError } from '../../errors.js';

export interface DeployedDatabaseOptions {
  /** Force the Neon driver on a plain PostgreSQL URL (workerd, or tests through the WebSocket proxy). */
  driver?: Exclude<DriverName, 'pglite'>;
  neonWsProxy?: string;
  max?: number;
  preparedStatements?: boolean;
}

export async function connectDeployed(url: string | undefined, options: DeployedDatabaseOptions = {}): Promise<Database> {
  if (!url) {
    throw new QueenError(
      503,
      'database_not_configured',
      'DATABASE_URL is not set for this function; ' +
        'set the secret (npx sst secret set DatabaseUrl …, or npx wrangler secret put DATABASE_URL) and redeploy.',
    );
  }
  const driver = options.driver ?? chooseDriver(url);
  if (driver === 'neon') {
    const { connectNeon } = await import('../../db/driver-neon.js');
    return connectNeon({ url, neonWsProxy: options.neonWsProxy, max: options.max, preparedStatements: options.preparedStatements });
  }
  const { connectPg } = await import('../../db/driver-pg.js');
  return connectPg({ url, max: options.max, preparedStatements: options.preparedStatements });
}

/**
 * Neon's pooled host carries `-pooler`; DDL and advisory locks need the direct endpoint. Any other
 * URL, a Unix socket's `postgres://user@/db?host=/run/postgresql` too, is already direct.
 */
export function directUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (!/-pooler\./.test(parsed.hostname)) return url;
  parsed.hostname = parsed.hostname.replace(/-pooler(?=\.)/, '');
  return parsed.toString();
}

const RUN_MIGRATIONS =
  'Run the migrations (npx sst deploy runs them; or DATABASE_URL=<direct url> npx queen-serverless migrate), then retry.';

/**
 * Checks once per cold start, in one query, that the deploy migrated the database to at least this
 * version's SQL: every applied migration's hash, position by position, an older schema refused. A function never runs DDL
 * (docs/semantics.md#migrations); it answers 503 until the migration step has run. Only success is
 * remembered, so a function recovers by itself once the migration lands.
 */
export function schemaGuard(shipped: () => readonly Migration[] = shippedMigrations): (db: Database) => Promise<void> {
  let checked = false;
  return async (db) => {
    if (checked) return;
    const expected = shipped();
    const applied = (await appliedHashes(db)) ?? [];
    const check = checkMigrations(applied, expected);
    if (check.unknown) {
      throw new QueenError(
        503,
        'schema_mismatch',
        `${describeUnknown(check.unknown)} Migrating refuses it too: deploy the version that migrated this database, or restore a backup.`,
      );
    }
    if (applied.length === 0) throw new QueenError(503, 'schema_outdated', `The database schema is not migrated. ${RUN_MIGRATIONS}`);
    if (check.stale.length) throw new QueenError(503, 'schema_outdated', `${describeStale(check.stale)} ${RUN_MIGRATIONS}`);
    if (check.missing.length) {
      throw new QueenError(
        503,
        'schema_outdated',
        `The database schema is at migration ${expected[applied.length - 1]!.tag} ` +
          `but this function needs ${expected.at(-1)!.tag}. ${RUN_MIGRATIONS}`,
      );
    }
    // A longer list whose start is ours passes: the deploy migrates before it updates the functions,
    // and a rollback redeploys this version on the newer schema (docs/operations.md#expand-and-contract).
    checked = true;
  };
}
