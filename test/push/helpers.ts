// Reads back what a push stored, through the codec, so tests check bytes rather than our own answers.
import { bytesToUuid } from '../../lib/codec/frame.js';
import { decodeSegmentRow } from '../../lib/broker/segments.js';
import type { Queryable } from '../../lib/db/types.js';

export interface StoredMessage {
  partitionId: string;
  offset: number;
  baseOffset: number;
  createdAt: Date;
  messageId: string;
  traceId: string | null;
  transactionId: string;
  producerSub: string | null;
  encrypted: boolean;
  payload: Uint8Array;
  text: string;
}

export async function storedMessages(db: Queryable, where = 'TRUE', params: unknown[] = []): Promise<StoredMessage[]> {
  const rows = await db.query<{ partition_id: string; base_offset: string; end_offset: string; created_at: Date; blob: Uint8Array }>(
    `SELECT partition_id, base_offset, end_offset, created_at, blob FROM queen.log_segments s WHERE ${where} ORDER BY partition_id, base_offset`,
    params,
  );
  return rows.flatMap((r) => {
    const base = Number(r.base_offset);
    return decodeSegmentRow(r, base, Number(r.end_offset), r.partition_id).map((m) => ({
      partitionId: r.partition_id,
      offset: m.offset,
      baseOffset: base,
      createdAt: r.created_at,
      messageId: bytesToUuid(m.messageId),
      traceId: m.traceId && bytesToUuid(m.traceId),
      transactionId: m.transactionId,
      producerSub: m.producerSub,
      encrypted: m.encrypted,
      payload: m.payload,
      text: new TextDecoder().decode(m.payload),
    }));
  });
}

export async function countRows(db: Queryable): Promise<Record<string, number>> {
  const [r] = await db.query<Record<string, string>>(
    `SELECT (SELECT count(*) FROM queen.queues) AS queues, (SELECT count(*) FROM queen.log_partitions) AS partitions,
            (SELECT count(*) FROM queen.log_segments) AS segments, (SELECT count(*) FROM queen.log_txns) AS txns`,
  );
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)]));
}

export const item = (queue: string, payload: unknown, extra: Record<string, unknown> = {}) => ({ queue, payload, ...extra });
