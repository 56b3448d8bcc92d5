// A duplicate answers with the original's message id, which only the original segment holds
// (docs/architecture.md#what-sql-cannot-see). push_segments returns those segments with the
// duplicate report, so reading them costs no extra round trip; this runs only on the duplicate
// path.
import { bytesToUuid } from '../codec/frame.js';
import { decodeSegment } from '../codec/segment.js';
import type { PushSegmentRow } from '../db/rows.js';

export interface DuplicateRef {
  item: number;
  partitionId: string;
  offset: number;
  baseOffset: number;
}

/** item index → original message id; items whose segment is gone (retention) or unreadable are absent. */
export function readOriginalMessageIds(segments: readonly PushSegmentRow[], dups: readonly DuplicateRef[]): Map<number, string> {
  const blobs = new Map<string, Uint8Array>();
  for (const s of segments) if (s.blob) blobs.set(`${s.partition_id}/${Number(s.base_offset)}`, s.blob);
  const bySegment = new Map<string, DuplicateRef[]>();
  for (const d of dups) {
    const key = `${d.partitionId}/${d.baseOffset}`;
    if (!blobs.has(key)) continue;
    const list = bySegment.get(key) ?? [];
    list.push(d);
    bySegment.set(key, list);
  }
  const out = new Map<number, string>();
  for (const [key, list] of bySegment) {
    const base = list[0]!.baseOffset;
    const offsets = list.map((d) => d.offset);
    let messages;
    try {
      messages = decodeSegment(blobs.get(key)!, base, Math.min(...offsets), Math.max(...offsets));
    } catch {
      continue; // a corrupt original must not fail the new items of this push; its id stays null
    }
    const byOffset = new Map(messages.map((m) => [m.offset, bytesToUuid(m.messageId)]));
    for (const d of list) {
      const id = byOffset.get(d.offset);
      if (id) out.set(d.item, id);
    }
  }
  return out;
}
