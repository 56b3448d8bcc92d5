// GET /messages/:partitionId/:transactionId (docs/api.md#messages): the message decoded from its
// segment, with each group's status (a subscribed group without a cursor yet counts from where it
// would start) and Queen's keys (payload, status, queueConfig, mode,
// consumerGroups[].name/consumed). The transactionId resolves through the sidecar, else through the
// DLQ copy; a dead-lettered message whose segment retention deleted is answered from that copy.
import { xxh3_128 } from '../codec/xxh3.js';
import type { MessageMarks, SegmentRow } from '../db/rows.js';
import type { Queryable } from '../db/types.js';
import { notFound } from '../errors.js';
import type { ReadContext } from './context.js';
import type { DlqAddress } from './dead-letter.js';
import { messageStatus, modeType } from './message-status.js';
import { messageDetail, payloadText, storedMessage, type StoredMessage } from './message-view.js';
import { decodeSegmentRow } from './segments.js';

/** A message as the detail route names it: its partition and transactionId. */
export type MessageAddress = Pick<DlqAddress, 'partitionId' | 'transactionId'>;

export type GroupStatus = 'pending' | 'leased' | 'completed' | 'dead_letter';

type GroupCursor = { consumerGroup: string; committed: number; leaseEnd: number | null; leaseExpiresAt: string | null };

// No segment columns when retention deleted the segment (the DLQ copy may remain).
type MessageRow = (SegmentRow | { base_offset: null; end_offset: null; blob: null }) &
  MessageMarks & {
    partition: string;
    queue: string;
    namespace: string | null;
    task: string | null;
    queue_config: Record<string, number>;
    msg_offset: string | null;
    seg_created_at: Date | null;
    groups: GroupCursor[] | null;
    dlq_groups: string[];
    dlq_message_id: string | null;
    dlq_trace_id: string | null;
    dlq_producer_sub: string | null;
    dlq_payload: Uint8Array | null;
    dlq_encrypted: boolean | null;
    dlq_created_at: Date | null;
    dlq_error: string | null;
    dlq_retry_count: number | null;
  };

const FIND_SQL = `
WITH part AS (
  SELECT p.id, p.name, q.id AS queue_id, q.name AS queue, q.namespace, q.task,
         jsonb_build_object('leaseTime', q.lease_time, 'retryLimit', q.retry_limit, 'retryDelay', q.retry_delay,
                            'ttl', q.ttl, 'priority', q.priority) AS queue_config
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
   WHERE p.id = $2 AND q.tenant_id = $1
), target AS (
  SELECT queen.message_offset(p_partition => part.id, p_hash => $3::bytea, p_txn => $4) AS off FROM part
)
SELECT part.name AS partition, part.queue, part.namespace, part.task, part.queue_config, target.off AS msg_offset,
       s.base_offset, s.end_offset, s.created_at AS seg_created_at, s.blob, m.*,
       (SELECT jsonb_agg(jsonb_build_object('consumerGroup', g.consumer_group, 'committed', g.committed,
                 'leaseEnd', g.lease_end, 'leaseExpiresAt', queen.admin_iso(t => g.lease_expires_at)) ORDER BY g.consumer_group)
          FROM queen.partition_groups(p_partition => part.id) g) AS groups,
       ARRAY(SELECT dg.consumer_group FROM queen.log_dlq dg
              WHERE dg.partition_id = part.id AND dg.msg_offset = target.off ORDER BY dg.consumer_group) AS dlq_groups,
       d.message_id AS dlq_message_id, d.trace_id AS dlq_trace_id, d.producer_sub AS dlq_producer_sub,
       d.payload AS dlq_payload, d.encrypted AS dlq_encrypted, d.created_at AS dlq_created_at,
       d.error_message AS dlq_error, d.retry_count AS dlq_retry_count
  FROM part CROSS JOIN target
  CROSS JOIN LATERAL queen.message_marks(p_partition => part.id) m
  LEFT JOIN LATERAL (
    SELECT s1.base_offset, s1.end_offset, s1.created_at, s1.blob FROM queen.log_segments s1
     WHERE s1.partition_id = part.id AND s1.base_offset <= target.off
     ORDER BY s1.base_offset DESC LIMIT 1) s ON s.end_offset >= target.off
  LEFT JOIN LATERAL (
    SELECT * FROM queen.log_dlq d1 WHERE d1.partition_id = part.id AND d1.msg_offset = target.off
     ORDER BY d1.failed_at DESC LIMIT 1) d ON true`;

/** Every reading group's status at `offset`; a group that dead-lettered it counts even once deleted. */
function groupStatuses(row: MessageRow, offset: number) {
  const dead = new Set(row.dlq_groups);
  const cursors = new Map((row.groups ?? []).map((g) => [g.consumerGroup, g]));
  const names = [...new Set([...cursors.keys(), ...dead])].sort();
  return names.map((name) => {
    const g = cursors.get(name);
    const status: GroupStatus = dead.has(name)
      ? 'dead_letter'
      : g && g.committed >= offset
        ? 'completed'
        : g?.leaseEnd != null && g.leaseEnd >= offset
          ? 'leased'
          : 'pending';
    return {
      name,
      consumed: status === 'completed',
      leaseExpiresAt: status === 'leased' ? g!.leaseExpiresAt : null,
      consumerGroup: name,
      status,
      committed: g ? g.committed : null,
    };
  });
}

/** Returns the response JSON text (data and payload embedded verbatim). */
export async function getMessage(db: Queryable, ctx: ReadContext, a: MessageAddress): Promise<string> {
  const { partitionId, transactionId } = a;
  const [row] = await db.query<MessageRow>(FIND_SQL, [ctx.tenant, partitionId, xxh3_128(transactionId), transactionId]);
  const missing = notFound(
    'message_not_found',
    `No message with transactionId "${transactionId}" in partition ${partitionId}, or retention has deleted it.`,
  );
  if (!row || row.msg_offset === null) throw missing;
  const offset = Number(row.msg_offset);
  const view = messageStatus(row, offset, row.dlq_groups.length > 0);
  const bus = row.bus.length;
  const detail = async (m: StoredMessage, payload: Uint8Array, encrypted: boolean) => {
    const text = await payloadText(payload, encrypted, ctx.config, row.queue);
    return messageDetail(
      { ...m, data: text },
      {
        payload: text,
        isEncrypted: encrypted,
        partitionId,
        queuePath: `${row.queue}/${row.partition}`,
        partition: row.partition,
        queue: row.queue,
        namespace: row.namespace,
        task: row.task,
        status: view.status,
        errorMessage: row.dlq_error,
        retryCount: row.dlq_retry_count,
        leaseExpiresAt: view.leaseExpiresAt,
        queueConfig: row.queue_config,
        mode: {
          hasQueueMode: row.queue_mode,
          busGroupsCount: bus,
          consumedByGroups: view.busStatus.consumedBy,
          type: modeType(row.queue_mode, bus),
        },
        consumerGroups: groupStatuses(row, offset),
      },
    );
  };
  if (row.blob !== null) {
    const [m] = decodeSegmentRow(row, offset, offset, partitionId);
    if (m && m.transactionId === transactionId) return detail(storedMessage(m, row.seg_created_at!), m.payload, m.encrypted);
  }
  if (row.dlq_payload === null) throw missing;
  const copy: StoredMessage = {
    id: row.dlq_message_id!,
    transactionId,
    traceId: row.dlq_trace_id,
    producerSub: row.dlq_producer_sub,
    createdAt: row.dlq_created_at!,
    offset,
  };
  return detail(copy, row.dlq_payload, row.dlq_encrypted === true);
}
