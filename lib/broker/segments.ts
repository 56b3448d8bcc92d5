// Reading a stored segment row: the row says which offsets its blob holds, so a blob with another
// number of frames is corrupt rather than misread.
import { decodeSegment, type DecodedMessage } from '../codec/segment.js';
import type { SegmentRow } from '../db/rows.js';

/** The messages of the segment with offsets in [from, to] (clamped to the segment). */
export function decodeSegmentRow(row: SegmentRow, from: number, to: number): DecodedMessage[] {
  const base = Number(row.base_offset);
  return decodeSegment(row.blob, base, from, to, Number(row.end_offset) - base + 1);
}
