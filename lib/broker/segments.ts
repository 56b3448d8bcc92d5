// Reading a stored segment row: the row says which offsets its blob holds, so a blob with another
// number of frames is corrupt rather than misread.
import { CodecError } from '../codec/errors.js';
import { decodeSegment, type DecodedMessage } from '../codec/segment.js';
import type { SegmentRow } from '../db/rows.js';

/** A stored segment that does not decode, with where it is: for the operator's log, not the client. */
export class UnreadableSegmentError extends Error {
  readonly code: string;

  constructor(
    readonly partitionId: string,
    readonly baseOffset: number,
    cause: CodecError,
  ) {
    super(`partition ${partitionId}, segment at offset ${baseOffset}: ${cause.message}`, { cause });
    this.name = 'UnreadableSegmentError';
    this.code = cause.code;
  }
}

/** The messages of the segment with offsets in [from, to] (clamped to the segment). */
export function decodeSegmentRow(row: SegmentRow, from: number, to: number, partitionId: string): DecodedMessage[] {
  const base = Number(row.base_offset);
  try {
    return decodeSegment(row.blob, base, from, to, Number(row.end_offset) - base + 1);
  } catch (err) {
    throw err instanceof CodecError ? new UnreadableSegmentError(partitionId, base, err) : err;
  }
}
