// The dispatcher's claim (docs/delivery.md#dispatch): one statement, queen.delivery_claim, claims
// due partitions of active subscriptions (maxInFlight, rateLimit, back-off and throttles applied
// under each subscription's row lock) and returns each claim's segments and its subscription.
import type { Config } from '../../config.js';
import type { PopRow } from '../../db/rows.js';
import type { Queryable } from '../../db/types.js';
import { groupClaims, type ClaimRange } from '../claims.js';

/** One claimed batch: a partition's range under a lease, and what sending it needs. */
export interface DeliveryBatch {
  subscriptionId: string;
  subscriptionName: string;
  tenant: string;
  group: string;
  url: string;
  /** Sealed (lib/broker/delivery/secrets.ts), opened when the request is built. */
  sealedHeaders: string;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** The queue's retryLimit + 1. */
  maxAttempts: number;
  leaseId: string;
  webhookId: string;
  /** 1 + the failed attempts this batch has had. */
  attempt: number;
  range: ClaimRange;
}

type ClaimRowOut = PopRow & {
  subscription_id: string;
  subscription_name: string;
  tenant_id: string;
  consumer_group: string;
  url: string;
  headers: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  timeout_ms: number;
  retry_base_ms: number;
  retry_max_ms: number;
  max_attempts: number;
  lease_id: string;
  webhook_id: string;
};

const CLAIM_SQL = 'SELECT * FROM queen.delivery_claim(p_queues => $1, p_max_claims => $2, p_max_bytes => $3)';

export interface Claimed {
  batches: DeliveryBatch[];
  /** A subscription that may have had work was held by another statement and not looked at. */
  skipped: boolean;
}

/** Claims up to `max` batches, of the subscriptions of `queueIds` only when given. */
export async function claimBatches(db: Queryable, config: Config, queueIds: readonly number[] | undefined, max: number): Promise<Claimed> {
  const rows = await db.query<ClaimRowOut>(CLAIM_SQL, [queueIds ?? null, max, config.maxResponseBytes]);
  const skipped = rows.length > 0 && rows.at(-1)!.claim === 0;
  const batches = groupClaims(skipped ? rows.slice(0, -1) : rows).map(({ first: r, ...range }) => ({
    subscriptionId: r.subscription_id,
    subscriptionName: r.subscription_name,
    tenant: r.tenant_id,
    group: r.consumer_group,
    url: r.url,
    sealedHeaders: r.headers,
    secret: r.secret,
    previousSecret: r.previous_secret,
    previousSecretUntil: r.previous_secret_until,
    timeoutMs: r.timeout_ms,
    retryBaseMs: r.retry_base_ms,
    retryMaxMs: r.retry_max_ms,
    maxAttempts: r.max_attempts,
    leaseId: r.lease_id,
    webhookId: r.webhook_id,
    attempt: r.attempt,
    range,
  }));
  return { batches, skipped };
}
