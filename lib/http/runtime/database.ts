// The database of a deployed function: node-postgres or the Neon driver, never PGlite, imported
// directly (not through connect()) so the function bundles leave the embedded database out.
import { chooseDriver } from '../../db/client.js';
import type { Database, DriverName } from '../../db/types.js';
import { appliedMigration, EXPECTED_MIGRATION } from '../../db/schema-version.js';
import { QueenError } from '../../errors.js';

export interface DeployedDatabaseOptions {
  /** Force the Neon driver on a plain PostgreSQL URL (workerd, or tests through the WebSocket proxy). */
  driver?: Exclude<DriverName, 'pglite'>;
  neonWsProxy?: string;
  max?: number;
}

export async function connectDeployed(url: string | undefined, options: DeployedDatabaseOptions = {}): Promise<Database> {
  if (!url) {
    throw new QueenError(503, 'database_not_configured', 'DATABASE_URL is not set for this function; set the secret (npx sst secret set DATABASE_URL …) and redeploy.');
  }
  const driver = options.driver ?? chooseDriver(url);
  if (driver === 'neon') {
    const { connectNeon } = await import('../../db/driver-neon.js');
    return connectNeon({ url, neonWsProxy: options.neonWsProxy, max: options.max });
  }
  const { connectPg } = await import('../../db/driver-pg.js');
  return connectPg({ url, max: options.max });
}

/** Neon's pooled host carries `-pooler`; DDL and advisory locks need the direct endpoint. */
export function directUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hostname = parsed.hostname.replace(/-pooler(?=\.)/, '');
  return parsed.toString();
}

/**
 * Checks once per cold start that the deploy migrated the database this far. A function never
 * runs DDL (SPEC §4b); it answers 503 until the deploy's migration step has run. Only success is
 * remembered, so a function recovers by itself once the migration lands.
 */
export function schemaGuard(expected = EXPECTED_MIGRATION): (db: Database) => Promise<void> {
  let checked = false;
  return async (db) => {
    if (checked) return;
    const applied = await appliedMigration(db);
    if (applied === null || applied < expected) {
      throw new QueenError(
        503,
        'schema_outdated',
        `The database schema is ${applied === null ? 'not migrated' : `at migration ${applied}`} but this function needs ${expected}. ` +
          'Run the migrations (npx sst deploy runs them; or DATABASE_URL=<direct url> npx tsx scripts/migrate.ts), then retry.',
      );
    }
    checked = true;
  };
}
