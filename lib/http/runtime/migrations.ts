// The deploy's migration step (docs/semantics.md#migrations): drizzle/ applied over the direct URL,
// never from a request path. Used by `scripts/migrate.ts` and by the migrator Lambda `sst deploy`
// invokes.
import { databaseHost } from '../../db/client.js';
import { migrateWithReport, MIGRATIONS_FOLDER, readMigrations, type MigrationReport } from '../../db/migrate.js';
import { connectDeployed, directUrl } from './database.js';

export interface DeployedMigrationReport extends MigrationReport {
  /** The newest migration the database now holds. */
  migration: string | null;
  host: string;
}

export async function migrateDeployed(url: string | undefined, folder = MIGRATIONS_FOLDER): Promise<DeployedMigrationReport> {
  if (!url) throw new Error('DATABASE_URL is not set: the migration step needs the database URL');
  const direct = directUrl(url);
  const db = await connectDeployed(direct, { max: 1 });
  try {
    const report = await migrateWithReport(db, folder);
    return { ...report, migration: readMigrations(folder).at(-1)?.tag ?? null, host: databaseHost(direct, { port: false }) };
  } finally {
    await db.close();
  }
}
