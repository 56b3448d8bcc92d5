// What a database has applied against what this version ships, position by position: drizzle
// records the sha256 of every migration it applies in drizzle.__drizzle_migrations. migrate() acts
// on the comparison; deployed functions only check it (docs/semantics.md#migrations,
// lib/http/runtime/database.ts).
import journal from '../../drizzle/meta/_journal.json' with { type: 'json' };
import manifest from '../../drizzle/hashes.json' with { type: 'json' };
import { SqlState, sqlState } from '../errors.js';
import type { Queryable } from './types.js';
import { SUPERSEDED_HASHES } from './migration-history.js';

export interface Migration {
  tag: string;
  hash: string;
}

/** A migration as read from drizzle/, for migrate() and the repair. */
export interface MigrationFile extends Migration {
  /** The journal's `when`, which drizzle stores as created_at. */
  when: number;
  statements: string[];
}

/** This version's migrations in journal order, with the hashes recorded in drizzle/hashes.json. */
export function shippedMigrations(): Migration[] {
  const hashes: Record<string, string | undefined> = manifest;
  return journal.entries.map(({ tag }) => {
    const hash = hashes[tag];
    if (!hash) throw new Error(`drizzle/hashes.json has no hash for ${tag}: run npm run db:manifest`);
    return { tag, hash };
  });
}

/** The hashes the database applied, in the order it applied them; null when it was never migrated. */
export async function appliedHashes(db: Queryable): Promise<string[] | null> {
  try {
    const rows = await db.query<{ hash: string }>('SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id');
    return rows.map((r) => r.hash);
  } catch (err) {
    const code = sqlState(err);
    if (code === SqlState.UNDEFINED_TABLE || code === SqlState.INVALID_SCHEMA_NAME) return null;
    throw err;
  }
}

export interface UnknownMigration {
  position: number;
  tag: string;
  expected: string;
  found: string;
}

export interface MigrationCheck<M extends Migration> {
  /** The first applied hash that is neither this version's migration nor a superseded version of it. */
  unknown?: UnknownMigration;
  /** Positions holding a superseded version of this version's migration (lib/db/migration-history.ts). */
  stale: { position: number; tag: string; commit: string }[];
  /** This version's migrations not applied yet. */
  missing: M[];
  /** Hashes applied after this version's last migration: a newer version migrated the database. */
  extra: string[];
}

export function checkMigrations<M extends Migration>(applied: readonly string[], shipped: readonly M[]): MigrationCheck<M> {
  const check: MigrationCheck<M> = { stale: [], missing: shipped.slice(applied.length), extra: applied.slice(shipped.length) };
  for (const [position, found] of applied.slice(0, shipped.length).entries()) {
    const { tag, hash } = shipped[position]!;
    if (found === hash) continue;
    const commit = SUPERSEDED_HASHES[tag]?.[found];
    if (commit) {
      check.stale.push({ position, tag, commit });
    } else {
      check.unknown = { position, tag, expected: hash, found };
      break;
    }
  }
  return check;
}

export function describeUnknown(u: UnknownMigration): string {
  return (
    `Migration ${u.position + 1} of drizzle.__drizzle_migrations should be ${u.tag} (sha256 ${u.expected}) ` +
    `but the database applied sha256 ${u.found}, ` +
    'SQL this version does not know (a migration edited after it ran, or one from another branch).'
  );
}

export function describeStale(stale: MigrationCheck<Migration>['stale']): string {
  return `The database ran earlier versions of ${stale.map((s) => `${s.tag} (from commit ${s.commit})`).join(', ')}: its SQL is stale.`;
}
