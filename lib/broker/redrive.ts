// DLQ redrive (docs/delivery.md#replay-seek-and-redrive): the single retry route applied to every
// dead letter a filter matches, in (partition, offset) order, a chunk per transaction. Each chunk
// deletes its rows and re-pushes them in one transaction, so a call retried after a lost answer
// finds those rows gone and pushes nothing twice, and a concurrent redrive waits on the row locks
// and then finds nothing either.
import type { RedriveResponse } from '../../client/src/wire.js';
import type { Database, Queryable } from '../db/types.js';
import { DLQ_COLUMNS, repushDeadLetters, type DlqRow } from './dead-letter.js';
import type { PushContext } from './push.js';
import { queueNotFound } from './queues.js';

export interface RedriveFilter {
  queue: string;
  partition?: string;
  consumerGroup?: string;
  from?: string;
  to?: string;
  /** Messages to re-push at most. */
  limit: number;
}

/** Messages per transaction; fewer when their payloads pass the body limit (a push's own bound). */
const CHUNK = 500;

const MATCHES = `q.tenant_id = $1 AND q.name = $2
   AND ($3::text IS NULL OR p.name = $3)
   AND ($4::text IS NULL OR d.consumer_group = $4)
   AND ($5::timestamptz IS NULL OR d.failed_at >= $5)
   AND ($6::timestamptz IS NULL OR d.failed_at <= $6)`;

// The next messages in (partition, offset) order with every matching row of each (one row per
// group that dead-lettered it): a message is re-pushed once, however many groups failed it.
const TAKE_CHUNK = `WITH keys AS (
  SELECT k.partition_id, k.msg_offset FROM (
    SELECT m.*, sum(m.bytes) OVER (ORDER BY m.partition_id, m.msg_offset) AS running FROM (
      SELECT DISTINCT ON (d.partition_id, d.msg_offset) d.partition_id, d.msg_offset, octet_length(d.payload) AS bytes
        FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id
       WHERE ${MATCHES}
       ORDER BY d.partition_id, d.msg_offset LIMIT $7) m) k
   WHERE k.running <= $8 OR k.running = k.bytes)
DELETE FROM queen.log_dlq d USING keys, queen.log_partitions p, queen.queues q
 WHERE d.partition_id = keys.partition_id AND d.msg_offset = keys.msg_offset
   AND p.id = d.partition_id AND q.id = p.queue_id AND ${MATCHES}
RETURNING ${DLQ_COLUMNS}, p.name AS partition, q.name AS queue`;

const params = (ctx: PushContext, f: RedriveFilter) => [
  ctx.tenant,
  f.queue,
  f.partition ?? null,
  f.consumerGroup ?? null,
  f.from ?? null,
  f.to ?? null,
];

/** One message per (partition, offset), the newest failure's copy, in log order. */
function messagesOf(rows: DlqRow[]): DlqRow[] {
  const byKey = new Map<string, DlqRow>();
  for (const r of rows) {
    const key = `${r.partition_id}:${r.msg_offset}`;
    const seen = byKey.get(key);
    if (!seen || r.failed_at > seen.failed_at) byKey.set(key, r);
  }
  return [...byKey.values()].sort((a, b) => Number(a.partition_id) - Number(b.partition_id) || Number(a.msg_offset) - Number(b.msg_offset));
}

export async function redriveDlq(db: Database, ctx: PushContext, f: RedriveFilter): Promise<RedriveResponse> {
  const [queue] = await db.query(`SELECT 1 FROM queen.queues WHERE tenant_id = $1 AND name = $2`, [ctx.tenant, f.queue]);
  if (!queue) throw queueNotFound(f.queue);
  let redriven = 0;
  let removed = 0;
  let chunks = 0;
  while (redriven < f.limit) {
    const take = Math.min(CHUNK, f.limit - redriven);
    const done = await db.transaction(async (tx: Queryable) => {
      const rows = await tx.query<DlqRow>(TAKE_CHUNK, [...params(ctx, f), take, ctx.config.maxBodyBytes]);
      const messages = messagesOf(rows);
      await repushDeadLetters(tx, ctx, messages);
      return { messages: messages.length, rows: rows.length };
    });
    if (done.rows === 0) break;
    redriven += done.messages;
    removed += done.rows;
    chunks++;
  }
  const [left] = await db.query<{ n: string }>(
    `SELECT count(DISTINCT (d.partition_id, d.msg_offset)) AS n
       FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id
      WHERE ${MATCHES}`,
    params(ctx, f),
  );
  return { success: true as const, queue: f.queue, redriven, removed, chunks, remaining: Number(left!.n) };
}
