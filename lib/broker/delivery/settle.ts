// The endpoint's answer turned into an ack (docs/delivery.md#the-answer), settled in one statement,
// queen.delivery_settle: the ack with the broker's own rules (retry budget, DLQ), the back-off,
// the attempts log row and the subscription's counters and state.
import { namedArgs } from '../../db/named-args.js';
import type { Queryable } from '../../db/types.js';
import type { AckStatus } from '../ack.js';
import type { ClaimedMessage } from '../claims.js';
import { backoffMs, throttleMs } from './backoff.js';
import type { DeliveryBatch } from './claim.js';
import type { EndpointAnswer } from './endpoint.js';

export type Outcome = 'delivered' | 'failed' | 'throttled' | 'gone';

interface AckPlan {
  offset: number;
  status: AckStatus;
  error: string | null;
}

export interface Settlement {
  outcome: Outcome;
  acks: AckPlan[];
  /** The wait before the batch (or the failed message) is tried again; null: none. */
  retryMs: number | null;
  error: string | null;
}

export interface Settled {
  /** delivered, failed, throttled, gone, or dead_lettered (a failure past the retry budget). */
  outcome: string;
  delivered: number;
  deadLettered: number;
  pausedReason: string | null;
  /** The lease had ended before the answer: nothing moved, the batch is sent again. */
  lost: boolean;
}

const STATUSES: Record<string, AckStatus> = { completed: 'completed', success: 'completed', failed: 'failed', retry: 'retry', dlq: 'dlq' };
const RANK: Record<AckStatus, number> = { completed: 0, retry: 1, failed: 2, dlq: 3 };

/** What the answer means for the batch (docs/delivery.md#the-answer). */
export function settlementOf(
  batch: DeliveryBatch,
  messages: readonly ClaimedMessage[],
  answer: EndpointAnswer,
  random = Math.random,
): Settlement {
  const { from, batchEnd } = batch.range;
  const status = answer.status;
  if (status !== null && status >= 200 && status < 300) {
    const acks = [
      ...answerAcks(answer.fullBody, messages, from, batchEnd),
      { offset: batchEnd, status: 'completed' as const, error: null },
    ];
    const signal = lowestSignal(acks);
    const n = signal?.offset === from ? batch.attempt : 1;
    return { outcome: 'delivered', acks, retryMs: signal?.status === 'failed' ? backoffMs(batch, n, random) : null, error: null };
  }
  if ((status === 429 || status === 503) && answer.retryAfterMs !== null) {
    return { outcome: 'throttled', acks: [], retryMs: throttleMs(batch, answer.retryAfterMs, batch.attempt, random), error: null };
  }
  if (status === 410) return { outcome: 'gone', acks: [], retryMs: null, error: null };
  const error = answer.error ?? `HTTP ${status}`;
  return { outcome: 'failed', acks: [{ offset: from, status: 'failed', error }], retryMs: backoffMs(batch, batch.attempt, random), error };
}

// `{"acks":[{"offset"|"transactionId", "status", "error"?}]}`; entries naming no message of the
// batch, or with another status, are ignored: what the answer does not name is completed.
function answerAcks(body: string | null, messages: readonly ClaimedMessage[], from: number, to: number): AckPlan[] {
  let parsed: unknown;
  try {
    parsed = body ? JSON.parse(body) : null;
  } catch {
    return [];
  }
  const list = (parsed as { acks?: unknown } | null)?.acks;
  if (!Array.isArray(list)) return [];
  const byTxn = new Map(messages.map((m) => [m.transactionId, m.offset]));
  const acks: AckPlan[] = [];
  for (const item of list as Record<string, unknown>[]) {
    const status = typeof item?.status === 'string' ? STATUSES[item.status] : undefined;
    const offset =
      typeof item?.offset === 'number' ? item.offset : typeof item?.transactionId === 'string' ? byTxn.get(item.transactionId) : undefined;
    if (!status || offset === undefined || !Number.isInteger(offset) || offset < from || offset > to) continue;
    acks.push({ offset, status, error: typeof item.error === 'string' ? item.error.slice(0, 1024) : null });
  }
  return acks;
}

function lowestSignal(acks: readonly AckPlan[]): AckPlan | undefined {
  let low: AckPlan | undefined;
  for (const a of acks) {
    if (a.status === 'completed') continue;
    if (!low || a.offset < low.offset || (a.offset === low.offset && RANK[a.status] > RANK[low.status])) low = a;
  }
  return low;
}

const SETTLE_SQL = `SELECT * FROM queen.delivery_settle(${namedArgs(
  'p_tenant',
  'p_subscription',
  'p_group',
  'p_partition',
  'p_lease',
  'p_webhook_id',
  'p_from',
  'p_to',
  'p_attempt',
  'p_outcome',
  'p_retry_ms',
  'p_status',
  'p_error',
  'p_latency_ms',
  'p_response',
  'p_offsets',
  'p_statuses',
  'p_errors',
  'f_offsets',
  'f_message_ids',
  'f_txns',
  'f_traces',
  'f_subs',
  'f_payloads',
  'f_encrypted',
  'f_created',
)})`;

// PostgreSQL text cannot hold U+0000, which an endpoint's answer may.
const text = (s: string | null) => (s === null ? null : s.replaceAll('\u0000', ''));

type SettleRow = { outcome: string; delivered: string; dead_lettered: number; paused_reason: string | null; lost: boolean };

export async function settleBatch(
  db: Queryable,
  batch: DeliveryBatch,
  messages: readonly ClaimedMessage[],
  answer: EndpointAnswer,
  settlement: Settlement,
): Promise<Settled> {
  // The frames a dead-letter move may need, so the ack never has to ask for them.
  const wanted = new Set(settlement.acks.filter((a) => a.status === 'failed' || a.status === 'dlq').map((a) => a.offset));
  const frames = messages.filter((m) => wanted.has(m.offset));
  const { acks } = settlement;
  const [row] = await db.query<SettleRow>(SETTLE_SQL, [
    batch.tenant,
    batch.subscriptionId,
    batch.group,
    batch.range.partitionId,
    batch.leaseId,
    batch.webhookId,
    batch.range.from,
    batch.range.batchEnd,
    batch.attempt,
    settlement.outcome,
    settlement.retryMs,
    answer.status,
    text(settlement.error),
    answer.latencyMs,
    text(answer.body),
    acks.map((a) => a.offset),
    acks.map((a) => a.status),
    acks.map((a) => text(a.error)),
    frames.map((m) => m.offset),
    frames.map((m) => m.id),
    frames.map((m) => m.transactionId),
    frames.map((m) => m.traceId),
    frames.map((m) => m.frame.producerSub),
    frames.map((m) => m.frame.payload),
    frames.map((m) => m.frame.encrypted),
    frames.map((m) => m.createdAt),
  ]);
  return {
    outcome: row!.outcome,
    delivered: Number(row!.delivered),
    deadLettered: row!.dead_lettered,
    pausedReason: row!.paused_reason,
    lost: row!.lost,
  };
}
