// GET /messages/:partitionId/:transactionId (SPEC §3.8): the message decoded from its segment, with
// each group's status (a subscribed group without a cursor yet counts from where it would start). The transactionId resolves through the sidecar (its GIN index from the
// push migration), else through the DLQ copy; a dead-lettered message whose segment retention
// deleted is answered from that copy.
import { bytesToUuid } from '../codec/frame.js';
import { xxh3_128 } from '../codec/xxh3.js';
import type { Config } from '../config.js';
import type { SegmentRow } from '../db/rows.js';
import type { Queryable } from '../db/types.js';
import { notFound } from '../errors.js';
import { payloadText, withRawData } from './dead-letter.js';
import { decodeSegmentRow } from './segments.js';

export type GroupStatus = 'pending' | 'leased' | 'completed' | 'dead_letter';

// No segment columns when retention deleted the segment (the DLQ copy may remain).
type MessageRow = (SegmentRow | { base_offset: null; end_offset: null; blob: null }) & {
  partition: string;
  queue: string;
  msg_offset: string | null;
  seg_created_at: Date | null;
  groups: { consumerGroup: string; status: GroupStatus; committed: number | null }[] | null;
  dlq_message_id: string | null;
  dlq_trace_id: string | null;
  dlq_producer_sub: string | null;
  dlq_payload: Uint8Array | null;
  dlq_encrypted: boolean | null;
  dlq_created_at: Date | null;
};

const FIND_SQL = `
WITH part AS (
  SELECT p.id, p.name, p.log_start, q.id AS queue_id, q.name AS queue
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
   WHERE p.id = $2 AND q.tenant_id = $1
), target AS (
  SELECT COALESCE(
    (SELECT min(t.base_offset + h.idx)
       FROM part, queen.log_txns t, LATERAL queen.log_unnest_hashes(t.hashes) h
      WHERE t.partition_id = part.id
        AND queen.log_txn_keys(t.partition_id, t.hashes) && ARRAY[int8send(part.id) || $3::bytea]
        AND h.h = $3::bytea AND t.base_offset + h.idx >= part.log_start),
    (SELECT min(d.msg_offset) FROM part, queen.log_dlq d WHERE d.partition_id = part.id AND d.transaction_id = $4)
  ) AS off
)
SELECT part.name AS partition, part.queue, target.off AS msg_offset,
       s.base_offset, s.end_offset, s.created_at AS seg_created_at, s.blob,
       (SELECT jsonb_agg(jsonb_build_object(
                 'consumerGroup', g.consumer_group,
                 'committed', c.committed,
                 'status', CASE
                   WHEN EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = part.id
                                   AND d.consumer_group = g.consumer_group AND d.msg_offset = target.off) THEN 'dead_letter'
                   WHEN COALESCE(c.committed, CASE WHEN sub.start_at IS NULL THEN -1
                                               ELSE queen.offset_at_time(part.id, sub.start_at) - 1 END) >= target.off THEN 'completed'
                   WHEN c.batch_end >= target.off AND c.lease_expires_at > now() THEN 'leased'
                   ELSE 'pending' END) ORDER BY g.consumer_group)
          FROM (SELECT s2.consumer_group FROM queen.consumer_subscriptions s2 WHERE s2.queue_id = part.queue_id
                UNION SELECT c2.consumer_group FROM queen.log_consumers c2 WHERE c2.partition_id = part.id
                UNION SELECT d2.consumer_group FROM queen.log_dlq d2 WHERE d2.partition_id = part.id AND d2.msg_offset = target.off) g
          LEFT JOIN queen.log_consumers c ON c.partition_id = part.id AND c.consumer_group = g.consumer_group
          LEFT JOIN queen.consumer_subscriptions sub ON sub.queue_id = part.queue_id AND sub.consumer_group = g.consumer_group) AS groups,
       d.message_id AS dlq_message_id, d.trace_id AS dlq_trace_id, d.producer_sub AS dlq_producer_sub,
       d.payload AS dlq_payload, d.encrypted AS dlq_encrypted, d.created_at AS dlq_created_at
  FROM part CROSS JOIN target
  LEFT JOIN LATERAL (
    SELECT s1.base_offset, s1.end_offset, s1.created_at, s1.blob FROM queen.log_segments s1
     WHERE s1.partition_id = part.id AND s1.base_offset <= target.off
     ORDER BY s1.base_offset DESC LIMIT 1) s ON s.end_offset >= target.off
  LEFT JOIN LATERAL (
    SELECT * FROM queen.log_dlq d1 WHERE d1.partition_id = part.id AND d1.msg_offset = target.off
     ORDER BY d1.failed_at DESC LIMIT 1) d ON true`;

/** Returns the response JSON text (data embedded verbatim). */
export async function getMessage(db: Queryable, tenant: string, partitionId: string, transactionId: string, config: Pick<Config, 'encryptionKey'>): Promise<string> {
  const [row] = await db.query<MessageRow>(FIND_SQL, [tenant, partitionId, xxh3_128(transactionId), transactionId]);
  const missing = notFound('message_not_found', `No message with transactionId "${transactionId}" in partition ${partitionId}, or retention has deleted it.`);
  if (!row || row.msg_offset === null) throw missing;
  const offset = Number(row.msg_offset);
  const common = { partitionId, partition: row.partition, queue: row.queue, offset, consumerGroups: row.groups ?? [] };
  if (row.blob !== null) {
    const [m] = decodeSegmentRow(row, offset, offset, partitionId);
    if (m && m.transactionId === transactionId) {
      return withRawData(
        {
          id: bytesToUuid(m.messageId),
          transactionId,
          traceId: m.traceId ? bytesToUuid(m.traceId) : null,
          producerSub: m.producerSub,
          createdAt: row.seg_created_at!.toISOString(),
          ...common,
        },
        await payloadText(m.payload, m.encrypted, config, row.queue),
      );
    }
  }
  if (row.dlq_payload === null) throw missing;
  return withRawData(
    {
      id: row.dlq_message_id,
      transactionId,
      traceId: row.dlq_trace_id,
      producerSub: row.dlq_producer_sub,
      createdAt: row.dlq_created_at!.toISOString(),
      ...common,
    },
    await payloadText(row.dlq_payload, row.dlq_encrypted === true, config, row.queue),
  );
}
