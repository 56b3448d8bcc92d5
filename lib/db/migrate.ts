// Applies drizzle/ migrations in one transaction under an advisory lock, bookkept in drizzle's own
// table so `drizzle-kit migrate` and this agree. Two processes migrating at once queue on the lock.
// Node only: deployed functions never run DDL (SPEC §4b), they call checkSchema.
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Database } from './types.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));
const MIGRATE_LOCK = 0x51ee_0001;

export async function migrate(db: Database, folder = MIGRATIONS_FOLDER): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]);
    await tx.query('CREATE SCHEMA IF NOT EXISTS drizzle');
    await tx.query(
      'CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
    );
    const [last] = await tx.query<{ created_at: string }>(
      'SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1',
    );
    let applied = 0;
    for (const m of migrations) {
      if (last && Number(last.created_at) >= m.folderMillis) continue;
      for (const stmt of m.sql) if (stmt.trim()) await tx.query(stmt);
      await tx.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [
        m.hash,
        m.folderMillis,
      ]);
      applied++;
    }
    return applied;
  });
}
