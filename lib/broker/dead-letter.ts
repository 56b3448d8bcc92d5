// The dead-letter write on ack. queen.ack cannot read a frame (SQL never decompresses), so when a
// group's outcome is a DLQ move it answers with the segment holding that offset; the frame is
// decoded here and handed to the second queen.ack call, which recomputes the ack under the cursor
// lock and inserts the log_dlq row and moves the cursor in the same statement, or asks again if
// the cursor moved in between. Nothing is locked while the broker decodes.
import { bytesToUuid } from '../codec/frame.js';
import { decodeSegment, type DecodedMessage } from '../codec/segment.js';

export interface DeadFrame {
  partitionId: string;
  offset: number;
  message: DecodedMessage;
  createdAt: Date;
}

/** A `need = 'frame'` row of queen.ack: the segment holding offset need_from. */
export interface FrameNeed {
  need_partition: string | null;
  need_from: string | null;
  base_offset: string | null;
  end_offset: string | null;
  created_at: Date | null;
  blob: Uint8Array | null;
}

export function addFrame(frames: Map<string, DeadFrame>, need: FrameNeed): void {
  const offset = Number(need.need_from);
  const base = Number(need.base_offset);
  const [message] = decodeSegment(need.blob!, base, offset, offset, Number(need.end_offset) - base + 1);
  frames.set(`${need.need_partition}:${offset}`, {
    partitionId: need.need_partition!,
    offset,
    message: message!,
    createdAt: need.created_at!,
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
