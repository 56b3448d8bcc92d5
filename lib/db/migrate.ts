// Applies drizzle/ migrations in one transaction under an advisory lock, bookkept in drizzle's own
// table so `drizzle-kit migrate` and this agree. Two processes migrating at once queue on the lock.
// Every applied migration is verified position by position first: a superseded version of one of
// ours is brought up to date, any other SQL refuses to migrate.
// Node only: deployed functions never run DDL (docs/semantics.md#migrations), they check
// (schema-version.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { Database } from './types.js';
import { repairSuperseded } from './migration-repair.js';
import { checkMigrations, describeUnknown, type MigrationFile } from './schema-version.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));
const MIGRATE_LOCK = 0x51ee_0001;

const REFUSED =
  'Nothing was changed. Migrate it with the version (or branch) that applied that SQL, or restore a backup; ' +
  'a local ./.queen can be moved aside to start empty.';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export interface MigrationReport {
  /** Tags applied by this call. */
  applied: string[];
  /** Tags whose superseded version this call brought up to date. */
  repaired: string[];
  /** Migrations a newer release applied after this version's last: left as they are (a rollback). */
  ahead: number;
}

/** The folder's migrations in journal order, hashed exactly as drizzle hashes them. */
export function readMigrations(folder = MIGRATIONS_FOLDER): MigrationFile[] {
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  return readMigrationFiles({ migrationsFolder: folder }).map((m, i) => ({
    tag: journal.entries[i]!.tag,
    hash: m.hash,
    when: m.folderMillis,
    statements: m.sql.filter((s) => s.trim()),
  }));
}

/** Migrates and returns how many migrations were applied. */
export async function migrate(db: Database, folder = MIGRATIONS_FOLDER): Promise<number> {
  return (await migrateWithReport(db, folder)).applied.length;
}

export async function migrateWithReport(db: Database, folder = MIGRATIONS_FOLDER): Promise<MigrationReport> {
  const files = readMigrations(folder);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK]);
    await tx.query('CREATE SCHEMA IF NOT EXISTS drizzle');
    await tx.query(
      'CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
    );
    const rows = await tx.query<{ id: number; hash: string; created_at: string | null }>(
      'SELECT id, hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id',
    );
    const check = checkMigrations(
      rows.map((r) => r.hash),
      files,
    );
    if (check.unknown) throw new MigrationError(`${describeUnknown(check.unknown)} ${REFUSED}`);
    // A newer release migrated further (a rollback): expand/contract keeps everything this version
    // uses, so there is nothing to do (docs/operations.md#rolling-back).
    if (check.extra.length) return { applied: [], repaired: [], ahead: check.extra.length };
    await repairSuperseded(tx, check.stale, files.slice(0, rows.length));
    // Rows follow the files: a repaired hash, and the `when` the journal was regenerated with
    // (drizzle-kit migrate skips every migration whose `when` is not above the newest created_at).
    for (const [i, row] of rows.entries()) {
      const file = files[i]!;
      if (row.hash !== file.hash || Number(row.created_at) !== file.when) {
        await tx.query('UPDATE drizzle.__drizzle_migrations SET hash = $2, created_at = $3 WHERE id = $1', [row.id, file.hash, file.when]);
      }
    }
    for (const m of check.missing) {
      for (const stmt of m.statements) await tx.query(stmt);
      await tx.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [m.hash, m.when]);
    }
    return { applied: check.missing.map((m) => m.tag), repaired: check.stale.map((s) => s.tag), ahead: 0 };
  });
}
