// Shared by the pop and ack suites: peek at and adjust cursor and queue rows.
import type { Database, Queryable } from '../../lib/db/types.js';

export async function cursor(db: Database, queue: string, partition: string, group = '__QUEUE_MODE__') {
  const [row] = await db.query<Record<string, any>>(
    `SELECT lc.* FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
       JOIN queen.queues q ON q.id = p.queue_id
      WHERE q.name = $1 AND p.name = $2 AND lc.consumer_group = $3`,
    [queue, partition, group],
  );
  if (!row) throw new Error(`no cursor for ${queue}/${partition}/${group}`);
  return row;
}

export async function configureQueue(db: Database, queue: string, set: string) {
  await db.query(`UPDATE queen.queues SET ${set} WHERE name = $1`, [queue]);
}

/** Makes every live lease of the group on the queue expire now (instead of sleeping). */
export async function expireLeases(db: Database, queue: string, group = '__QUEUE_MODE__') {
  await db.query(
    `UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
       FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
      WHERE p.id = lc.partition_id AND q.name = $1 AND lc.consumer_group = $2 AND lc.batch_end IS NOT NULL`,
    [queue, group],
  );
}

/**
 * One wildcard pop of `queue` (queue mode, batch 10) straight through queen.pop, and the rows it
 * read from log_partitions and log_consumers. PostgreSQL's per-transaction counters also hold the
 * backend's reads not yet reported (its earlier transactions within the last second), so the
 * pop's own reads are the difference across it, in one transaction on one backend.
 */
export async function wildcardPopReads(db: Database, queue: string) {
  const reads = (tx: Queryable) =>
    tx.query<{ relname: string; n: string }>(
      `SELECT relname, coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n FROM pg_stat_xact_user_tables
        WHERE schemaname = 'queen' AND relname IN ('log_partitions', 'log_consumers') ORDER BY relname`,
    );
  return db.transaction(async (tx) => {
    const before = await reads(tx);
    const rows = await tx.query<{ partition_name: string }>(
      `SELECT * FROM queen.pop('default', $1, NULL, NULL, NULL, '__QUEUE_MODE__', 10, 1, 'lease-reads', false, 'all', NULL, 1000000)`,
      [queue],
    );
    const after = await reads(tx);
    return {
      partitions: [...new Set(rows.map((r) => r.partition_name))],
      reads: Object.fromEntries(after.map((r, i) => [r.relname, Number(r.n) - Number(before[i]!.n)])) as Record<
        'log_consumers' | 'log_partitions',
        number
      >,
    };
  });
}
