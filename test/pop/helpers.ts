// Shared by the pop and ack suites: peek at and adjust cursor and queue rows.
import type { Database } from '../../lib/db/types.js';

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
