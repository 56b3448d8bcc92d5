// The ack verb (docs/semantics.md#acks). A request of completed acks is one call of queen.ack. Two rare paths
// need the function to read a segment (SQL never decompresses: docs/architecture.md#what-sql-cannot-see) and call again:
//   - a transactionId whose sidecar hash was purged: the segments after the cursor are searched;
//   - a dead-letter move: the frame is decoded and handed to the second call, which recomputes
//     the ack under the cursor lock and writes the DLQ row and the cursor move together, or asks
//     again if the cursor moved in between. Nothing is locked across the two calls.
// The rows queen.ack answers with are AckRow (lib/db/rows.ts).
import { xxh3_128 } from '../codec/xxh3.js';
import { ensureZstd } from '../codec/zstd.js';
import type { AckNeedRow, AckResultRow, AckRow } from '../db/rows.js';
import { namedArgs } from '../db/named-args.js';
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';
import { addFrame, frameParams, type DeadFrame } from './dead-letter.js';
import { decodeSegmentRow } from './segments.js';
// The answer's shape is the wire's, declared once in the client's wire module.
import type { AckResult } from '../../client/src/wire.js';

export type { AckResult };

export type AckStatus = 'completed' | 'failed' | 'retry' | 'dlq';

export interface AckItem {
  transactionId: string;
  /** The partition id as sent; a non-numeric one is simply not found. */
  partitionId: string;
  /** Null: no lease (the wire's "" or an absent leaseId). */
  leaseId: string | null;
  status: AckStatus;
  consumerGroup: string;
  error: string | null;
  /** The offset pop returned, when the client echoes it: no hash lookup needed. */
  offset: number | null;
}

export interface AckContext extends TenantContext {
  /** A transaction's `requiredLeases`: each authorises its acks without a leaseId where it is live (docs/semantics.md#transactions). */
  requiredLeases?: readonly string[];
}

const ACK_PARAMS = [
  'p_tenant',
  'p_idx',
  'p_partitions',
  'p_groups',
  'p_hashes',
  'p_offsets',
  'p_statuses',
  'p_leases',
  'p_errors',
  'p_required_leases',
];
// The second call also carries the frames to dead-letter, in frameParams' order (dead-letter.ts).
const FRAME_PARAMS = [
  'f_partitions',
  'f_offsets',
  'f_message_ids',
  'f_txns',
  'f_traces',
  'f_subs',
  'f_payloads',
  'f_encrypted',
  'f_created',
];
const ACK_SQL = `SELECT * FROM queen.ack(${namedArgs(...ACK_PARAMS)})`;
const ACK_FRAMES_SQL = `SELECT * FROM queen.ack(${namedArgs(...ACK_PARAMS, ...FRAME_PARAMS)})`;
const NO_HASH = new Uint8Array(0);
const MAX_ROUNDS = 5;
const PARTITION_ID = /^[0-9]{1,18}$/;

/** Results in item order. Safe inside a caller's transaction: problems come back per item. */
export async function ackMessages(db: Queryable, ctx: AckContext, items: readonly AckItem[]): Promise<AckResult[]> {
  const results = new Array<AckResult | undefined>(items.length);
  const hashes = items.map((it) => xxh3_128(it.transactionId));
  const offsets = items.map((it) => it.offset);
  const frames = new Map<string, DeadFrame>();
  let todo = items.map((_, i) => i);
  for (let round = 0; todo.length > 0; round++) {
    if (round === MAX_ROUNDS) throw new Error(`ack did not settle after ${MAX_ROUNDS} rounds (cursor moving concurrently)`);
    const rows = await callAck(db, ctx, items, todo, hashes, offsets, [...frames.values()]);
    const needs: AckNeedRow[] = [];
    for (const row of rows) {
      if (row.need === null) results[row.idx] = toResult(items[row.idx]!, row);
      else needs.push(row);
    }
    todo = todo.filter((i) => results[i] === undefined);
    if (needs.length > 0) await ensureZstd();
    const searched = new Set<number>();
    for (const need of needs) {
      if (need.need === 'frame') addFrame(frames, need);
      else searchPurged(items, need, offsets, searched);
    }
    // An id the segments did not hold is not there: no hash and no offset is "Message not found".
    for (const i of searched) if (offsets[i] === null) hashes[i] = NO_HASH;
  }
  return results as AckResult[];
}

async function callAck(
  db: Queryable,
  ctx: AckContext,
  items: readonly AckItem[],
  todo: number[],
  hashes: Uint8Array[],
  offsets: (number | null)[],
  frames: DeadFrame[],
): Promise<AckRow[]> {
  const pick = <T>(f: (i: number) => T) => todo.map(f);
  const params: unknown[] = [
    ctx.tenant,
    todo,
    pick((i) => (PARTITION_ID.test(items[i]!.partitionId) ? items[i]!.partitionId : '-1')),
    pick((i) => items[i]!.consumerGroup),
    pick((i) => (hashes[i]!.length ? hashes[i] : null)),
    pick((i) => offsets[i]),
    pick((i) => items[i]!.status),
    pick((i) => items[i]!.leaseId),
    pick((i) => items[i]!.error),
    ctx.requiredLeases ?? null,
  ];
  if (frames.length === 0) return db.query<AckRow>(ACK_SQL, params);
  return db.query<AckRow>(ACK_FRAMES_SQL, [...params, ...frameParams(frames)]);
}

// The hashes of need_items were purged with the sidecar: the lowest matching offset in the
// segments the function sent (they come in offset order), noting which items were searched.
function searchPurged(items: readonly AckItem[], need: AckNeedRow, offsets: (number | null)[], searched: Set<number>): void {
  const decoded = decodeSegmentRow(need, Number(need.need_from), Number(need.need_to), need.need_partition);
  for (const i of need.need_items ?? []) {
    searched.add(i);
    if (offsets[i] !== null) continue;
    const hit = decoded.find((m) => m.transactionId === items[i]!.transactionId);
    if (hit) offsets[i] = hit.offset;
  }
}

// The SQL's refusals keep Queen's words first (a client may match on them) and add what to do next.
const NEXT_STEP: Readonly<Record<string, string>> = {
  'Invalid or expired lease': 'Invalid or expired lease: the lease expired or was released; pop again, the batch will be delivered again',
  'Message not found':
    "Message not found: no message with this transactionId in this partition after the group's cursor; send the transactionId and partitionId the pop returned",
};

const withNextStep = (error: string | null) => (error !== null && Object.hasOwn(NEXT_STEP, error) ? NEXT_STEP[error]! : error);

function toResult(item: AckItem, row: AckResultRow): AckResult {
  const result: AckResult = {
    index: row.idx,
    transactionId: item.transactionId,
    success: row.success === true,
    error: withNextStep(row.error),
    queueName: row.queue_name,
    partitionName: row.partition_name,
    leaseReleased: row.lease_released === true,
    dlq: row.dlq === true,
    committed: row.committed === true,
    offset: row.msg_offset === null ? null : Number(row.msg_offset),
  };
  if (row.skipped) result.skipped = true;
  if (row.already_committed) result.alreadyCommitted = true;
  return result;
}
