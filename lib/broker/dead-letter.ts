// The dead-letter queue (docs/semantics.md#dead-letter-queue,
// docs/semantics.md#dlq-retry-and-delete): the copy of a frame that ack writes, and listing with
// filters and pagination, retry (re-push under a fresh transactionId and drop the rows, in one
// transaction) and delete of those copies.
//
// The write on ack: queen.ack cannot read a frame (SQL never decompresses), so when a group's
// outcome is a DLQ move it answers with the segment holding that offset; the frame is decoded
// here and handed to the second queen.ack call, which recomputes the ack under the cursor lock
// and inserts the log_dlq row and moves the cursor in the same statement, or asks again if the
// cursor moved in between. Nothing is locked while the broker decodes.
import { v7 as uuidv7 } from 'uuid';
import { bytesToUuid } from '../codec/frame.js';
import type { DecodedMessage } from '../codec/segment.js';
import type { AckNeedRow } from '../db/rows.js';
import type { Database, Queryable } from '../db/types.js';
import { notFound, notSupported } from '../errors.js';
import type { ReadContext, TenantContext } from './context.js';
import { deadLetterAnswer, deadLetterMessage, messageArray, payloadText } from './message-view.js';
import { pushItems, type PushContext } from './push.js';
import { decodeSegmentRow } from './segments.js';

export interface DeadFrame {
  partitionId: string;
  offset: number;
  message: DecodedMessage;
  createdAt: Date;
}

/** Decodes the frame a `need = 'frame'` row of queen.ack asks for (offset need_from of its segment). */
export function addFrame(frames: Map<string, DeadFrame>, need: AckNeedRow): void {
  const offset = Number(need.need_from);
  const [message] = decodeSegmentRow(need, offset, offset, need.need_partition);
  frames.set(`${need.need_partition}:${offset}`, {
    partitionId: need.need_partition,
    offset,
    message: message!,
    createdAt: need.created_at,
  });
}

/** queen.ack's f_* parameters: the frame exactly as stored, payload still encrypted if it was. */
export function frameParams(frames: readonly DeadFrame[]): unknown[] {
  return [
    frames.map((f) => f.partitionId),
    frames.map((f) => f.offset),
    frames.map((f) => bytesToUuid(f.message.messageId)),
    frames.map((f) => f.message.transactionId),
    frames.map((f) => (f.message.traceId ? bytesToUuid(f.message.traceId) : null)),
    frames.map((f) => f.message.producerSub),
    frames.map((f) => f.message.payload),
    frames.map((f) => f.message.encrypted),
    frames.map((f) => f.createdAt),
  ];
}

export interface DlqFilter {
  queue?: string;
  consumerGroup?: string;
  partition?: string;
  from?: string;
  to?: string;
  limit: number;
  offset: number;
}

export type DlqRow = {
  partition_id: string;
  consumer_group: string;
  msg_offset: string;
  message_id: string;
  transaction_id: string;
  trace_id: string | null;
  producer_sub: string | null;
  payload: Uint8Array;
  encrypted: boolean;
  error_message: string | null;
  retry_count: number;
  created_at: Date;
  failed_at: Date;
  partition: string;
  queue: string;
  total?: string;
};

export const DLQ_COLUMNS = `d.partition_id, d.consumer_group, d.msg_offset, d.message_id, d.transaction_id, d.trace_id,
  d.producer_sub, d.payload, d.encrypted, d.error_message, d.retry_count, d.created_at, d.failed_at`;

const FILTERED = `FROM queen.log_dlq d
  JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE q.tenant_id = $1
   AND ($2::text IS NULL OR q.name = $2)
   AND ($3::text IS NULL OR d.consumer_group = $3)
   AND ($4::text IS NULL OR p.name = $4)
   AND ($5::timestamptz IS NULL OR d.failed_at >= $5)
   AND ($6::timestamptz IS NULL OR d.failed_at <= $6)`;

/** Newest failure first; `total` counts every row the filters match. Returns the response JSON text. */
export async function listDlq(db: Queryable, ctx: ReadContext, f: DlqFilter): Promise<string> {
  const params = [ctx.tenant, f.queue ?? null, f.consumerGroup ?? null, f.partition ?? null, f.from ?? null, f.to ?? null];
  const rows = await db.query<DlqRow>(
    `SELECT ${DLQ_COLUMNS}, p.name AS partition, q.name AS queue, count(*) OVER () AS total ${FILTERED}
      ORDER BY d.failed_at DESC, d.partition_id, d.msg_offset DESC, d.consumer_group
      LIMIT $7 OFFSET $8`,
    [...params, f.limit, f.offset],
  );
  let total = rows.length > 0 ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && f.offset > 0) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*) AS n ${FILTERED}`, params);
    total = Number(row!.n);
  }
  const messages: string[] = [];
  for (const r of rows) {
    messages.push(
      deadLetterMessage(
        {
          id: r.message_id,
          transactionId: r.transaction_id,
          traceId: r.trace_id,
          producerSub: r.producer_sub,
          createdAt: r.created_at,
          offset: Number(r.msg_offset),
          data: await payloadText(r.payload, r.encrypted, ctx.config, r.queue),
        },
        {
          partitionId: r.partition_id,
          partition: r.partition,
          queue: r.queue,
          consumerGroup: r.consumer_group,
          errorMessage: r.error_message,
          retryCount: r.retry_count,
          failedAt: r.failed_at,
        },
      ),
    );
  }
  return deadLetterAnswer({ messages: messageArray(messages), total, pagination: { limit: f.limit, offset: f.offset } });
}

export interface DlqAddress {
  partitionId: string;
  transactionId: string;
  /** Only this group's row; all groups' rows when absent. */
  consumerGroup?: string;
}

const DELETE_SQL = `DELETE FROM queen.log_dlq d
  USING queen.log_partitions p, queen.queues q
  WHERE d.partition_id = $2 AND d.transaction_id = $3 AND ($4::text IS NULL OR d.consumer_group = $4)
    AND p.id = d.partition_id AND q.id = p.queue_id AND q.tenant_id = $1
  RETURNING ${DLQ_COLUMNS}, p.name AS partition, q.name AS queue`;

const deleteParams = (tenant: string, a: DlqAddress) => [tenant, a.partitionId, a.transactionId, a.consumerGroup ?? null];

const notInDlq = (a: DlqAddress) =>
  notFound(
    'dlq_message_not_found',
    `No dead-lettered message with transactionId "${a.transactionId}" in partition ${a.partitionId}${a.consumerGroup ? ` for group "${a.consumerGroup}"` : ''}; list them with GET /api/v1/dlq.`,
  );

/**
 * Re-pushes the dead-lettered payload once to its queue and partition under a fresh
 * transactionId and deletes the DLQ rows, in one transaction: the delete runs first, so a
 * concurrent retry of the same rows waits for it and then finds nothing. Answers the route's body
 * and the queue pushed to.
 */
export async function retryDlq(db: Database, ctx: PushContext, a: DlqAddress) {
  return db.transaction(async (tx) => {
    const rows = await tx.query<DlqRow>(DELETE_SQL, deleteParams(ctx.tenant, a));
    if (rows.length === 0) throw notInDlq(a);
    const newest = rows.reduce((x, y) => (y.failed_at > x.failed_at ? y : x));
    const [pushed] = await repushDeadLetters(tx, ctx, [newest]);
    const answer = {
      success: true as const,
      transactionId: pushed!.transaction_id,
      messageId: pushed!.message_id,
      offset: pushed!.offset,
      partitionId: pushed!.partition_id,
      removed: rows.length,
    };
    return { answer, queue: pushed!.queueName };
  });
}

/**
 * Pushes each dead letter's payload again, in the given order, to its queue and partition under a
 * fresh transactionId. The single retry and the redrive call it in the transaction that deleted
 * the rows, so a call retried after a lost answer finds them gone and pushes nothing twice.
 */
export async function repushDeadLetters(tx: Queryable, ctx: PushContext, rows: readonly DlqRow[]) {
  const items = [];
  for (const r of rows) {
    const text = await payloadText(r.payload, r.encrypted, ctx.config, r.queue);
    items.push({
      queue: r.queue,
      partition: r.partition,
      payload: new TextEncoder().encode(text),
      transactionId: uuidv7(),
      traceId: r.trace_id,
    });
  }
  return pushItems(tx, ctx, items);
}

export async function deleteDlq(db: Queryable, ctx: TenantContext, a: DlqAddress) {
  const rows = await db.query<DlqRow>(DELETE_SQL, deleteParams(ctx.tenant, a));
  if (rows.length === 0) throw notInDlq(a);
  return {
    success: true as const,
    partitionId: a.partitionId,
    transactionId: a.transactionId,
    message: 'Dead-letter copies deleted; the message itself stays in the log until retention removes its segment.',
    deleted: true as const,
    removed: rows.length,
  };
}

/** POST /messages/:p/:t/dlq, which Queen's dashboard and admin clients call and Queen's server lacks. */
export function moveToDlq(): never {
  throw notSupported(
    'Moving a message to the DLQ by hand is not supported: the log is immutable and a message leaves the queue only through its cursor. Ack it with status "dlq" (POST /api/v1/ack) to dead-letter it.',
  );
}
