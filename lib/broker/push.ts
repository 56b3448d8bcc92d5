// The push verb (docs/semantics.md#push): one segment + one sidecar row per (queue, partition) of a request,
// written by one call of queen.push_segments. That call writes nothing when the request needs
// fixing (duplicates to drop, payloads to encrypt); the broker fixes it and calls again, so a
// request without duplicates costs exactly one statement and one with duplicates two. The rows it
// answers with are PushRow (lib/db/rows.ts).
import { v7 as uuidv7 } from 'uuid';
import { bytesToUuid, uuidToBytes, type Frame } from '../codec/frame.js';
import { encodeSegment } from '../codec/segment.js';
import { hashTransactionIds } from '../codec/xxh3.js';
import type { PushRow, PushSegmentRow, PushWrittenRow } from '../db/rows.js';
import { namedArgs } from '../db/named-args.js';
import type { Queryable } from '../db/types.js';
import type { BrokerContext } from './context.js';
import { encryptPayload, requireEncryptionKey } from './encryption.js';
import { readOriginalMessageIds, type DuplicateRef } from './push-duplicates.js';
// The answer's shape is the wire's, declared once in the client's wire module.
import type { PushResult } from '../../client/src/wire.js';

export type { PushResult };

/** One message to push, already checked against docs/semantics.md#names-and-limits (names.ts) and with its defaults filled in. */
export interface PushItem {
  queue: string;
  partition: string;
  /** The payload's JSON text as UTF-8 bytes, stored verbatim (plaintext; push encrypts if the queue says so). */
  payload: Uint8Array;
  /** Null: the minted message id is used. */
  transactionId: string | null;
  traceId: string | null;
}

export type PushContext = BrokerContext;

interface Group {
  queue: string;
  partition: string;
  /** Every item of the group, in request order. */
  all: number[];
  /** Items to write: `all` minus repeats inside the request and known duplicates. */
  members: number[];
  encrypt: boolean;
  /** Repeats of a key inside the request were left out of `members`. */
  collapsed: boolean;
  blob: Uint8Array | null;
}

// p_keys picks the 12-parameter push_segments; the 11-parameter one serves the previous release
// (docs/operations.md#expand-and-contract).
const PUSH_SQL = `SELECT * FROM queen.push_segments(${namedArgs(
  'p_tenant',
  'p_queues',
  'p_partitions',
  'p_counts',
  'p_blob_lens',
  'p_blobs',
  'p_hashes',
  'p_encrypted',
  'p_collapsed',
  'p_probe_grp',
  'p_probe_item',
  'p_keys',
)})`;

// (tenant, queue) names seen with encryptionEnabled, so later pushes encrypt before the first
// call. Safe to lose or to be stale: push_segments checks every group and says which to redo.
const encryptedQueues = new Set<string>();
const cacheKey = (tenant: string, queue: string) => `${tenant}\u0000${queue}`;

/**
 * Writes items atomically when `q` is a transaction, and as one statement otherwise. Results are
 * in item order. Safe to call inside another transaction: problems come back as rows, never as
 * an aborted transaction.
 */
export async function pushItems(q: Queryable, ctx: PushContext, items: readonly PushItem[]): Promise<PushResult[]> {
  if (items.length === 0) return [];
  const ids = new Array<Uint8Array>(items.length);
  const messageIds = new Array<string>(items.length);
  const txnIds = new Array<string>(items.length);
  for (let i = 0; i < items.length; i++) {
    const bytes = new Uint8Array(16);
    uuidv7(undefined, bytes);
    ids[i] = bytes;
    messageIds[i] = bytesToUuid(bytes);
    txnIds[i] = items[i]!.transactionId ?? messageIds[i]!;
  }
  const hashes = hashTransactionIds(txnIds);
  const groups = groupItems(ctx.tenant, items, txnIds);
  const results = new Array<PushResult | undefined>(items.length);
  const result = (i: number, status: PushResult['status'], partitionId: string, offset: number, messageId: string | null): PushResult => ({
    index: i,
    status,
    transaction_id: txnIds[i]!,
    message_id: messageId,
    partition_id: partitionId,
    trace_id: items[i]!.traceId,
    queueName: items[i]!.queue,
    offset,
  });

  const frameOf = (i: number, payload: Uint8Array, encrypted: boolean): Frame => ({
    messageId: ids[i]!,
    traceId: items[i]!.traceId === null ? null : uuidToBytes(items[i]!.traceId!),
    transactionId: txnIds[i]!,
    producerSub: ctx.sub,
    encrypted,
    payload,
  });

  for (let round = 0; ; round++) {
    const live = groups.filter((g) => g.members.length > 0);
    if (live.length === 0) break;
    for (const g of live) {
      if (g.blob !== null) continue;
      let frames: Frame[];
      if (g.encrypt) {
        const key = await requireEncryptionKey(ctx.config, g.queue);
        frames = await Promise.all(g.members.map(async (i) => frameOf(i, await encryptPayload(key, items[i]!.payload), true)));
      } else {
        frames = g.members.map((i) => frameOf(i, items[i]!.payload, false));
      }
      g.blob = await encodeSegment(frames, ctx.config.zstdLevel);
    }
    // Only client-chosen transactionIds can repeat; a freshly minted message id cannot.
    const probeGroups: number[] = [];
    const probeItems: number[] = [];
    live.forEach((g, gi) => g.members.forEach((i, k) => items[i]!.transactionId !== null && (probeGroups.push(gi), probeItems.push(k))));
    const members = live.length === 1 ? live[0]!.members : live.flatMap((g) => g.members);
    const rows = await q.query<PushRow>(PUSH_SQL, [
      ctx.tenant,
      live.map((g) => g.queue),
      live.map((g) => g.partition),
      live.map((g) => g.members.length),
      live.map((g) => g.blob!.length),
      concat(live.map((g) => g.blob!)),
      pickHashes(hashes, members),
      live.map((g) => g.encrypt),
      live.map((g) => g.collapsed),
      probeGroups,
      probeItems,
      dedupKeys(hashes, members),
    ]);
    if (rows.every(isWritten)) {
      if (rows.length !== live.length) throw new Error(`push_segments wrote ${rows.length} of ${live.length} segments`);
      for (const r of rows) {
        const base = Number(r.base_offset);
        live[r.grp]!.members.forEach((i, k) => (results[i] = result(i, 'queued', r.partition_id, base + k, messageIds[i]!)));
      }
      break;
    }
    if (round > items.length + 4) throw new Error('push_segments kept asking for changes; giving up on this request');

    const dups: DuplicateRef[] = [];
    const dropped = new Set<number>();
    for (const r of rows) {
      if (r.kind === 'dup') {
        const i = live[r.grp]!.members[r.item]!;
        dups.push({ item: i, partitionId: r.partition_id, offset: Number(r.msg_offset), baseOffset: Number(r.base_offset) });
        dropped.add(i);
      } else if (r.kind === 'encrypt' || r.kind === 'plain') {
        const g = live[r.grp]!;
        g.encrypt = r.kind === 'encrypt';
        if (g.encrypt) encryptedQueues.add(cacheKey(ctx.tenant, g.queue));
        else encryptedQueues.delete(cacheKey(ctx.tenant, g.queue));
        g.blob = null;
      } else if (r.kind === 'expand') {
        const g = live[r.grp]!;
        g.collapsed = false;
        g.members = g.all.filter((i) => !results[i]);
        g.blob = null;
      }
    }
    if (dups.length > 0) {
      const originals = readOriginalMessageIds(rows.filter(isSegment), dups);
      for (const d of dups) results[d.item] = result(d.item, 'duplicate', d.partitionId, d.offset, originals.get(d.item) ?? null);
      for (const g of live) {
        if (!g.members.some((i) => dropped.has(i))) continue;
        g.members = g.members.filter((i) => !dropped.has(i));
        g.blob = null;
      }
    }
  }

  // Repeats inside the request answer like the first occurrence of their key.
  for (const g of groups) {
    if (!g.collapsed) continue;
    const first = new Map<string, PushResult>();
    for (const i of g.all) {
      const r = results[i];
      if (r) {
        if (!first.has(txnIds[i]!)) first.set(txnIds[i]!, r);
        continue;
      }
      const f = first.get(txnIds[i]!)!;
      results[i] = result(i, 'duplicate', f.partition_id, f.offset, f.message_id);
    }
  }
  return results as PushResult[];
}

const isWritten = (r: PushRow): r is PushWrittenRow => r.kind === 'ok';
const isSegment = (r: PushRow): r is PushSegmentRow => r.kind === 'seg';

function groupItems(tenant: string, items: readonly PushItem[], txnIds: readonly string[]): Group[] {
  const byName = new Map<string, Group>();
  const seen = new Map<Group, Set<string>>();
  for (let i = 0; i < items.length; i++) {
    const { queue, partition } = items[i]!;
    const name = `${queue}\u0000${partition}`;
    let g = byName.get(name);
    if (!g) {
      g = { queue, partition, all: [], members: [], encrypt: encryptedQueues.has(cacheKey(tenant, queue)), collapsed: false, blob: null };
      byName.set(name, g);
      seen.set(g, new Set());
    }
    g.all.push(i);
    const keys = seen.get(g)!;
    if (keys.has(txnIds[i]!)) {
      g.collapsed = true;
    } else {
      keys.add(txnIds[i]!);
      g.members.push(i);
    }
  }
  return [...byName.values()];
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// The sidecar index's key of each message before its partition is mixed in: the hash's first 8
// bytes as a signed int8 (docs/storage.md#the-duplicate-probe), computed here rather than per insert.
function dedupKeys(hashes: Uint8Array, members: readonly number[]): string[] {
  const view = new DataView(hashes.buffer, hashes.byteOffset, hashes.byteLength);
  return members.map((i) => view.getBigInt64(16 * i).toString());
}

function pickHashes(hashes: Uint8Array, members: readonly number[]): Uint8Array {
  const out = new Uint8Array(16 * members.length);
  members.forEach((i, k) => out.set(hashes.subarray(16 * i, 16 * i + 16), 16 * k));
  return out;
}
