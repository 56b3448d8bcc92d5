// Deployed functions check, never apply, the schema: the deploy migrates (SPEC §4b).
import journal from '../../drizzle/meta/_journal.json' with { type: 'json' };
import type { Queryable } from './types.js';

export const EXPECTED_MIGRATION = Math.max(...journal.entries.map((e) => e.when));

/** The newest migration the database has applied, or null when it was never migrated. */
export async function appliedMigration(db: Queryable): Promise<number | null> {
  const [table] = await db.query<{ t: string | null }>(
    "SELECT to_regclass('drizzle.__drizzle_migrations')::text AS t",
  );
  if (!table?.t) return null;
  const [row] = await db.query<{ v: string | null }>(
    'SELECT max(created_at) AS v FROM drizzle.__drizzle_migrations',
  );
  return row?.v == null ? null : Number(row.v);
}
