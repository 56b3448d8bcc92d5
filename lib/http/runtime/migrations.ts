// The deploy's migration step (SPEC §4b): drizzle/ applied over the direct URL, never from a
// request path. Used by `scripts/migrate.ts` and by the migrator Lambda `sst deploy` invokes.
import { migrate, MIGRATIONS_FOLDER } from '../../db/migrate.js';
import { appliedMigration } from '../../db/schema-version.js';
import { connectDeployed, directUrl } from './database.js';

export interface MigrationReport {
  applied: number;
  migration: number | null;
  host: string;
}

export async function migrateDeployed(url: string | undefined, folder = MIGRATIONS_FOLDER): Promise<MigrationReport> {
  if (!url) throw new Error('DATABASE_URL is not set: the migration step needs the database URL');
  const direct = directUrl(url);
  const db = await connectDeployed(direct, { max: 1 });
  try {
    const applied = await migrate(db, folder);
    return { applied, migration: await appliedMigration(db), host: new URL(direct).hostname };
  } finally {
    await db.close();
  }
}
