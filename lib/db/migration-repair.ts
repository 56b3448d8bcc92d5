// Brings a database that ran a superseded version of 0000-0004 (lib/db/migration-history.ts) to
// what today's files create. Re-running only the edited files would not do: 0000 is plain CREATE
// TABLE, and the function files' older versions defined functions today's do not have
// (queen.log_probe_hashes until 30b32c4), which CREATE OR REPLACE would leave behind. So the
// repair drops every queen function (CASCADE takes their triggers and the GIN expression index on
// queen.log_txn_keys with them), adds to the tables what 0000 gained after a107141, and re-runs
// today's 0001-0004, which are written to be re-run (CREATE OR REPLACE, IF NOT EXISTS, DROP
// TRIGGER IF EXISTS). Tables and their rows stay; the GIN index is rebuilt over log_txns once.
// Only databases migrated before hashes.json froze the migrations hold superseded hashes, so
// nothing after 0004 has been applied to them yet. test/db/upgrade.test.ts checks the result.
import type { Queryable } from './types.js';
import type { MigrationCheck, MigrationFile } from './schema-version.js';

const REPLAYED = new Set(['0001_storage_parameters', '0002_push_functions', '0003_pop_ack_functions', '0004_admin_functions']);

// f289bc1 added the wildcard pop's columns to 0000; cursors made before it get their queue_id.
const TABLES_SINCE_A107141 = [
  'ALTER TABLE queen.consumer_subscriptions ADD COLUMN IF NOT EXISTS scanned_at timestamp with time zone',
  'ALTER TABLE queen.log_consumers ADD COLUMN IF NOT EXISTS queue_id bigint',
  'ALTER TABLE queen.log_consumers ADD COLUMN IF NOT EXISTS pending boolean DEFAULT true NOT NULL',
  `UPDATE queen.log_consumers lc SET queue_id = lp.queue_id
     FROM queen.log_partitions lp WHERE lp.id = lc.partition_id AND lc.queue_id IS NULL`,
  'CREATE INDEX IF NOT EXISTS idx_log_consumers_pending ON queen.log_consumers USING btree (queue_id, consumer_group) WHERE pending',
];

/** `applied` are this version's files at the positions the database has applied. */
export async function repairSuperseded(
  tx: Queryable,
  stale: MigrationCheck<MigrationFile>['stale'],
  applied: readonly MigrationFile[],
): Promise<void> {
  if (stale.length === 0) return;
  const functions = await tx.query<{ f: string }>(
    "SELECT p.oid::regprocedure::text AS f FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace ORDER BY 1",
  );
  // IF EXISTS: a CASCADE may already have taken one that depends on another.
  for (const { f } of functions) await tx.query(`DROP FUNCTION IF EXISTS ${f} CASCADE`);
  if (stale.some((s) => s.tag === '0000_log_schema')) for (const stmt of TABLES_SINCE_A107141) await tx.query(stmt);
  for (const file of applied) if (REPLAYED.has(file.tag)) for (const stmt of file.statements) await tx.query(stmt);
}
