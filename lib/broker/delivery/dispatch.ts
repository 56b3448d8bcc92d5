// The dispatcher (docs/delivery.md#dispatch): claims due batches, sends each one concurrently (a
// slow endpoint holds only its own requests), and settles each answer as soon as it comes. What
// the triggers after a push and the scheduled sweep call.
import type { Config } from '../../config.js';
import type { Database } from '../../db/types.js';
import { ensureZstd } from '../../codec/zstd.js';
import { readClaim } from '../claims.js';
import { claimBatches, type DeliveryBatch } from './claim.js';
import { sendDelivery } from './endpoint.js';
import { deliveryRequest } from './request.js';
import { settleBatch, settlementOf } from './settle.js';

export interface DispatchOptions {
  /** Epoch ms: no claim after it (requests already sent are still settled). */
  deadline: number;
  /** Only the subscriptions of these queues (after a push). */
  queueIds?: number[];
  log?: (m: string, e?: unknown) => void;
  /** Aborted: no more claims or waits (a server stopping); requests already sent are settled. */
  signal?: AbortSignal;
}

export interface DispatchReport {
  batches: number;
  delivered: number;
  failed: number;
  deadLettered: number;
}

// Requests one run keeps open at once, and claims one statement takes.
const MAX_OPEN = 256;
const MAX_CLAIMS = 64;
const RECHECK_MS = 50;
const MAX_SKIPPED_LOOKS = 20;

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

// When a claim found nothing: whether a retry, a throttle or a rate-limit bucket of an active
// subscription came due just now (between that claim and this look: claim again once), and in how
// many ms the next one does, by PostgreSQL's clock. Leases are not waited for: a live one is
// another run's batch, which that run settles, and one whose dispatcher died is claimed by
// whichever run comes after it ends. A batch overdue for long is one the claim cannot take (its
// cursor moved on): not waited for.
const NEXT_DUE_SQL = `WITH due AS (
  SELECT greatest(x.next_attempt_at, s.throttled_until) AS at
    FROM queen.subscription_partitions x JOIN queen.subscriptions s ON s.id = x.subscription_id
   WHERE s.state = 'active' AND x.next_attempt_at IS NOT NULL AND x.lease_until IS NULL
     AND ($1::bigint[] IS NULL OR s.queue_id = ANY ($1))
  UNION ALL
  SELECT s.rate_at + make_interval(secs => (1 - s.rate_tokens) / s.rate_limit)
    FROM queen.subscriptions s
   WHERE s.state = 'active' AND s.rate_limit > 0 AND s.rate_tokens < 1 AND s.rate_at IS NOT NULL
     AND ($1::bigint[] IS NULL OR s.queue_id = ANY ($1)))
SELECT bool_or(at <= now()) AS due_now,
       ceil(extract(epoch FROM min(at) FILTER (WHERE at > now()) - now()) * 1000)::int AS ms
  FROM due WHERE at > now() - interval '5 seconds'`;

export async function runDelivery(db: Database, config: Config, options: DispatchOptions): Promise<DispatchReport> {
  const report: DispatchReport = { batches: 0, delivered: 0, failed: 0, deadLettered: 0 };
  const log = options.log ?? ((m, e) => console.error(m, e));
  const open = new Set<Promise<void>>();
  let lookedAgain = false;
  let skippedLooks = 0;
  // Settles finished so far: one that finishes while a claim runs may have freed what that claim
  // skipped (the subscription row it held), so the claim is made again.
  let settled = 0;
  await ensureZstd();
  const sleep = (ms: number) => abortableSleep(ms, options.signal);
  try {
    while (Date.now() < options.deadline && !options.signal?.aborted) {
      const room = Math.min(MAX_CLAIMS, MAX_OPEN - open.size);
      const before = settled;
      const { batches, skipped } = room > 0 ? await claimBatches(db, config, options.queueIds, room) : { batches: [], skipped: false };
      for (const batch of batches) {
        const sent: Promise<void> = deliverBatch(db, config, batch, report)
          .catch((err) => log(`delivery: batch ${batch.webhookId} of subscription ${batch.subscriptionId}`, err))
          .finally(() => {
            settled += 1;
            open.delete(sent);
          });
        open.add(sent);
      }
      if (batches.length > 0) {
        lookedAgain = false;
        skippedLooks = 0;
      }
      if (batches.length > 0 || settled !== before) continue;
      if (open.size > 0) {
        await Promise.race(open);
        continue;
      }
      // A subscription held by another run's claim, which may have looked before the push this
      // run was started for: look again once that claim is over, a few times at most.
      if (skipped && skippedLooks < MAX_SKIPPED_LOOKS) {
        skippedLooks += 1;
        await sleep(RECHECK_MS);
        continue;
      }
      const next = await nextDue(db, options);
      if (next.dueNow) {
        // Due, and not claimed: another run may hold the subscription's row right now. Look again,
        // soon after the first time (a batch overdue for seconds stops counting as due).
        if (lookedAgain) await sleep(RECHECK_MS);
        lookedAgain = true;
        continue;
      }
      if (next.ms === null) break;
      lookedAgain = false;
      await sleep(next.ms);
    }
  } finally {
    // Whatever ended the run (its deadline, a database error), what it sent is settled first.
    await Promise.all(open);
  }
  return report;
}

async function deliverBatch(db: Database, config: Config, batch: DeliveryBatch, report: DispatchReport): Promise<void> {
  // A batch that cannot be read (no key for an encrypted queue, a damaged segment) is not sent;
  // its lease runs out and the error is logged.
  const messages = await readClaim(batch.range, config);
  const { headers, body } = await deliveryRequest(config, batch, messages, Math.floor(Date.now() / 1000));
  const answer = await sendDelivery(batch.url, { headers, body, timeoutMs: batch.timeoutMs, allowPrivate: config.deliveryAllowPrivate });
  const settled = await settleBatch(db, batch, messages, answer, settlementOf(batch, messages, answer));
  report.batches += 1;
  report.delivered += settled.delivered;
  report.deadLettered += settled.deadLettered;
  if (settled.outcome === 'failed' || settled.outcome === 'dead_lettered') report.failed += 1;
}

/** ms until something falls due, null when nothing does before the deadline. */
async function nextDue(db: Database, options: DispatchOptions): Promise<{ dueNow: boolean; ms: number | null }> {
  const [row] = await db.query<{ due_now: boolean | null; ms: number | null }>(NEXT_DUE_SQL, [options.queueIds ?? null]);
  const ms = row?.ms == null || Date.now() + row.ms >= options.deadline ? null : Math.max(10, row.ms);
  return { dueNow: row?.due_now === true, ms };
}
