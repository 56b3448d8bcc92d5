// The pop verb (docs/semantics.md#pop-and-leases): one call of queen.pop claims partitions, leases (committed, batch_end]
// and returns the whole segment rows; this module slices and decodes them (PostgreSQL never
// decompresses) and builds the response text with each payload spliced in verbatim.
import { v7 as uuidv7 } from 'uuid';
import { ensureZstd } from '../codec/zstd.js';
import type { Config } from '../config.js';
import type { PopRow } from '../db/rows.js';
import { namedArgs } from '../db/named-args.js';
import type { Database, Queryable } from '../db/types.js';
import { groupClaims, readSegment, type ClaimedMessage, type ClaimRange } from './claims.js';
import type { ReadContext } from './context.js';
import { messageArray, popAnswer, popMessage, type PopAdditions } from './message-view.js';

export type SubscriptionMode = 'all' | 'new' | 'from';

/** One pop, checked against docs/semantics.md#names-and-limits (names.ts, limits.ts) and with its defaults filled in. */
export interface PopRequest {
  /** Null for a discovery pop (namespace/task). */
  queue: string | null;
  /** Null for a wildcard or discovery pop. */
  partition: string | null;
  namespace: string | null;
  task: string | null;
  group: string;
  batch: number;
  partitions: number;
  wait: boolean;
  timeoutMs: number;
  autoAck: boolean;
  mode: SubscriptionMode;
  from: Date | null;
}

export type PopContext = ReadContext;

export interface PopResult {
  /** The 200 response body, JSON text (payloads verbatim, so it is not built with JSON.stringify). */
  body: string;
  messageCount: number;
  leaseId: string;
  /** What the body renders: the claims in claim order, each with the messages the body carries. */
  claims: PoppedClaim[];
}

export interface PoppedClaim extends ClaimRange {
  messages: ClaimedMessage[];
  /** Last offset actually put in the response; null when none. */
  delivered: number | null;
}

const POP_SQL = `SELECT * FROM queen.pop(${namedArgs(
  'p_tenant',
  'p_queue',
  'p_partition',
  'p_namespace',
  'p_task',
  'p_group',
  'p_batch',
  'p_partitions',
  'p_lease',
  'p_auto_ack',
  'p_mode',
  'p_from',
  'p_max_bytes',
)})`;
const SHRINK_SQL = `SELECT queen.pop_shrink(${namedArgs(
  'p_tenant',
  'p_group',
  'p_lease',
  'p_partitions',
  'p_claimed',
  'p_ends',
  'p_from',
)})`;
// Room for the envelope around the messages array.
const ENVELOPE_BYTES = 1024;

/** One pop attempt: null when there is nothing to deliver (204). */
export async function popOnce(db: Queryable, ctx: PopContext, req: PopRequest): Promise<PopResult | null> {
  const leaseId = req.autoAck ? '' : uuidv7();
  const rows = await db.query<PopRow>(POP_SQL, [
    ctx.tenant,
    req.queue,
    req.partition,
    req.namespace,
    req.task,
    req.group,
    req.batch,
    req.partitions,
    req.autoAck ? null : leaseId,
    req.autoAck,
    req.mode,
    req.from,
    ctx.config.maxResponseBytes,
  ]);
  if (rows.length === 0) return null;
  const claims: PoppedClaim[] = groupClaims(rows).map((c) => ({ ...c, messages: [], delivered: null }));
  let rendered: Awaited<ReturnType<typeof renderMessages>>;
  try {
    rendered = await renderMessages(claims, req, leaseId, ctx.config);
  } catch (err) {
    await releaseClaims(db, ctx, req, leaseId, claims, err);
    throw err;
  }
  const { parts, truncated } = rendered;
  if (truncated) await shrinkLeases(db, ctx, req, leaseId, claims);
  const { queue, partition, partitionId } = claims[0]!;
  const partitionsClaimed = claims.filter((c) => c.delivered !== null).length;
  const consumerGroup = req.group;
  const body = popAnswer({
    success: true,
    queue,
    partition,
    partitionId,
    leaseId,
    consumerGroup,
    partitionsClaimed,
    messages: messageArray(parts),
  });
  return { body, messageCount: parts.length, leaseId, claims };
}

/**
 * Pops, and with `wait` polls with back-off until messages arrive or the deadline
 * (min(timeout, QUEEN_MAX_WAIT_MS)) passes. No transaction is open while waiting.
 */
export async function popMessages(db: Database, ctx: PopContext, req: PopRequest): Promise<PopResult | null> {
  const deadline = Date.now() + Math.min(req.timeoutMs, ctx.config.maxWaitMs);
  let pause = 50;
  for (;;) {
    const result = await popOnce(db, ctx, req);
    if (result || !req.wait) return result;
    const left = deadline - Date.now();
    if (left <= 0) return null;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    pause = Math.min(pause * 2, 1000);
  }
}

// Decodes the leased ranges in claim order and renders each message, stopping before the
// response would pass maxResponseBytes (always at least one message).
async function renderMessages(claims: PoppedClaim[], req: PopRequest, leaseId: string, config: Config) {
  await ensureZstd();
  const parts: string[] = [];
  const cap = config.maxResponseBytes - ENVELOPE_BYTES;
  let size = 0;
  let truncated = false;
  for (const claim of claims) {
    const { partitionId, partition, queue, attempt } = claim;
    const lease: PopAdditions = { partitionId, partition, queue, leaseId, consumerGroup: req.group, attempt };
    for (const seg of claim.segments) {
      if (truncated) break;
      for (const m of await readSegment(claim, seg, config)) {
        const part = popMessage(m, lease);
        const bytes = part.length + (m.dataBytes - m.data.length) + 1;
        if (parts.length > 0 && size + bytes > cap) {
          truncated = true;
          break;
        }
        size += bytes;
        parts.push(part);
        claim.messages.push(m);
        claim.delivered = m.offset;
      }
    }
    if (claim.delivered !== claim.batchEnd) truncated = true;
  }
  return { parts, truncated };
}

// Error path: nothing reaches the client, so give back every lease this pop took (and the
// attempt it counted; for autoAck the cursor), instead of holding the partitions until leaseTime
// runs out. The caller's error is the one that matters; a failed release leaves the lease to expire.
async function releaseClaims(db: Queryable, ctx: PopContext, req: PopRequest, leaseId: string, claims: PoppedClaim[], cause: unknown) {
  for (const claim of claims) claim.delivered = null;
  try {
    await shrinkLeases(db, ctx, req, leaseId, claims);
  } catch (err) {
    console.error('pop: could not release the leases of a failed response', { cause, err });
  }
}

// Rare path: lease only what the response carries (docs/semantics.md#response-size).
async function shrinkLeases(db: Queryable, ctx: PopContext, req: PopRequest, leaseId: string, claims: PoppedClaim[]) {
  const cut = claims.filter((c) => c.delivered !== c.batchEnd);
  await db.query(SHRINK_SQL, [
    ctx.tenant,
    req.group,
    req.autoAck ? null : leaseId,
    cut.map((c) => c.partitionId),
    cut.map((c) => c.batchEnd),
    cut.map((c) => c.delivered),
    cut.map((c) => c.from),
  ]);
}
