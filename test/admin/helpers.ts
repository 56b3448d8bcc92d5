// Ages and inspects the rows of a queue for the admin and retention suites.
import type { Database } from '../../lib/db/types.js';

/** Makes every segment and sidecar row of a queue `seconds` older, offset by offset (older first). */
export async function backdate(db: Database, queue: string, seconds: number, where = 'TRUE') {
  for (const table of ['log_segments', 'log_txns']) {
    await db.query(
      `UPDATE queen.${table} s SET created_at = s.created_at - make_interval(secs => $2)
         FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
        WHERE s.partition_id = p.id AND q.name = $1 AND ${where}`,
      [queue, seconds],
    );
  }
}

export async function partitionRow(db: Database, queue: string, partition = 'Default') {
  const [row] = await db.query<{ id: string; last_offset: string; log_start: string; txns_start: string }>(
    `SELECT p.id, p.last_offset, p.log_start, p.txns_start FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
      WHERE q.name = $1 AND p.name = $2`,
    [queue, partition],
  );
  return { id: row!.id, lastOffset: Number(row!.last_offset), logStart: Number(row!.log_start), txnsStart: Number(row!.txns_start) };
}

export async function segmentBases(db: Database, queue: string, partition = 'Default'): Promise<number[]> {
  const rows = await db.query<{ base_offset: string }>(
    `SELECT s.base_offset FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
       JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 AND p.name = $2 ORDER BY 1`,
    [queue, partition],
  );
  return rows.map((r) => Number(r.base_offset));
}

/** As if the queue had been written `seconds` ago: its segments, sidecar rows and partitions' last writes. */
export async function ageQueue(db: Database, queue: string, seconds: number) {
  await backdate(db, queue, seconds);
  await db.query(
    `UPDATE queen.log_partitions p SET last_write_at = p.last_write_at - make_interval(secs => $2)
       FROM queen.queues q WHERE q.id = p.queue_id AND q.name = $1`,
    [queue, seconds],
  );
}
