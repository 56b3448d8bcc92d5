// What the subscription routes answer (docs/api.md#subscriptions): the subscription without its
// secrets or header values, its group's lag and in-flight messages, and the delivery log.
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/types.js';
import { notFound } from '../../errors.js';
import type { ReadContext, TenantContext } from '../context.js';
// The answers' shapes are the wire's, declared once in the client's wire module.
import type {
  Subscription,
  SubscriptionAttempt,
  SubscriptionDetail,
  SubscriptionListed,
  SubscriptionPartition,
} from '../../../client/src/wire.js';
import { openText } from './secrets.js';

export type SubscriptionRow = {
  id: string;
  tenant_id: string;
  queue_id: string;
  queue: string;
  name: string;
  consumer_group: string;
  url: string;
  state: 'active' | 'paused';
  paused_reason: string | null;
  batch_size: number;
  max_in_flight: number;
  timeout_ms: number;
  rate_limit: number;
  retry_base_ms: number;
  retry_max_ms: number;
  subscription_mode: 'all' | 'new';
  disable_after_ms: string;
  headers: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  delivered: string;
  failed_attempts: string;
  dead_lettered: string;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export const SUBSCRIPTION_COLUMNS = `s.id, s.tenant_id, s.queue_id, s.name, s.consumer_group, s.url, s.state, s.paused_reason,
  s.batch_size, s.max_in_flight, s.timeout_ms, s.rate_limit, s.retry_base_ms, s.retry_max_ms, s.subscription_mode,
  s.disable_after_ms, s.headers, s.secret, s.previous_secret, s.previous_secret_until, s.failing_since,
  s.delivered, s.failed_attempts, s.dead_lettered, s.last_attempt_at, s.created_at, s.updated_at`;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The subscription as every route shows it: header names only, never a secret or a header value. */
export async function subscriptionView(config: Config, r: SubscriptionRow): Promise<Subscription> {
  const headers = Object.keys(JSON.parse(await openText(config, r.headers)) as Record<string, string>);
  return {
    id: r.id,
    queue: r.queue,
    name: r.name,
    consumerGroup: r.consumer_group,
    url: r.url,
    state: r.state as Subscription['state'],
    pausedReason: r.paused_reason,
    options: {
      batchSize: r.batch_size,
      maxInFlight: r.max_in_flight,
      timeoutMs: r.timeout_ms,
      rateLimit: r.rate_limit,
      retryBaseMs: r.retry_base_ms,
      retryMaxMs: r.retry_max_ms,
      subscriptionMode: r.subscription_mode as Subscription['options']['subscriptionMode'],
      disableAfterMs: Number(r.disable_after_ms),
      headers,
    },
    failingSince: iso(r.failing_since),
    previousSecretValidUntil: r.previous_secret_until && r.previous_secret_until > new Date() ? iso(r.previous_secret_until) : null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

type AttemptRow = {
  id: string;
  partition_id: string;
  partition: string | null;
  from_offset: string;
  to_offset: string;
  webhook_id: string;
  attempt: number;
  outcome: string;
  status: number | null;
  error: string | null;
  latency_ms: number;
  response: string | null;
  at: Date;
};

const attemptView = (a: AttemptRow): SubscriptionAttempt => ({
  id: Number(a.id),
  at: a.at.toISOString(),
  partitionId: a.partition_id,
  partition: a.partition,
  fromOffset: Number(a.from_offset),
  toOffset: Number(a.to_offset),
  webhookId: a.webhook_id,
  attempt: a.attempt,
  outcome: a.outcome as SubscriptionAttempt['outcome'],
  status: a.status,
  error: a.error,
  latencyMs: a.latency_ms,
  response: a.response,
});

/** Newest first, `before` an attempt id of an earlier page. */
export async function listAttempts(db: Queryable, subscriptionId: string, page: { limit: number; before?: number }) {
  const rows = await db.query<AttemptRow>(
    `SELECT a.id, a.partition_id, p.name AS partition, a.from_offset, a.to_offset, a.webhook_id, a.attempt, a.outcome, a.status,
            a.error, a.latency_ms, a.response, a.at
       FROM queen.subscription_attempts a LEFT JOIN queen.log_partitions p ON p.id = a.partition_id
      WHERE a.subscription_id = $1 AND ($2::bigint IS NULL OR a.id < $2)
      ORDER BY a.id DESC LIMIT $3`,
    [subscriptionId, page.before ?? null, page.limit],
  );
  return rows.map(attemptView);
}

type PositionRow = {
  partition_id: string;
  partition: string;
  lag: string;
  in_flight: string;
  next_attempt_at: Date | null;
};

/**
 * The group's position on each partition of the queue (queen.group_positions, the consumer-group
 * routes' own figures) and the dispatcher's state there: the batch in a request now, and when a
 * batch that failed or was throttled goes again.
 */
export async function groupPositions(
  db: Queryable,
  subscriptionId: string,
  queueId: string,
  group: string,
): Promise<SubscriptionPartition[]> {
  const rows = await db.query<PositionRow>(
    `SELECT g.partition_id, p.name AS partition, g.lag,
            GREATEST(g.in_flight, CASE WHEN sp.lease_until > now() THEN sp.to_offset - sp.from_offset + 1 ELSE 0 END) AS in_flight,
            CASE WHEN sp.next_attempt_at > now() THEN sp.next_attempt_at END AS next_attempt_at
       FROM queen.group_positions(p_queues => ARRAY[$1::bigint]) g
       JOIN queen.log_partitions p ON p.id = g.partition_id
       LEFT JOIN queen.subscription_partitions sp ON sp.subscription_id = $3 AND sp.partition_id = g.partition_id
      WHERE g.consumer_group = $2
      ORDER BY p.name`,
    [queueId, group, subscriptionId],
  );
  return rows.map((r) => ({
    partitionId: r.partition_id,
    partition: r.partition,
    lag: Number(r.lag),
    inFlight: Number(r.in_flight),
    nextAttemptAt: iso(r.next_attempt_at),
  }));
}

const total = (xs: { lag: number; inFlight: number }[]) => ({
  lag: xs.reduce((n, x) => n + x.lag, 0),
  inFlight: xs.reduce((n, x) => n + x.inFlight, 0),
});

const ROW_OF_TENANT = `SELECT ${SUBSCRIPTION_COLUMNS}, q.name AS queue FROM queen.subscriptions s JOIN queen.queues q ON q.id = s.queue_id WHERE s.tenant_id = $1`;

/** GET /subscriptions[?queue=]. */
export async function listSubscriptions(db: Queryable, ctx: ReadContext, req: { queue?: string }) {
  const { tenant, config } = ctx;
  const { queue } = req;
  const rows = await db.query<SubscriptionRow>(`${ROW_OF_TENANT} AND ($2::text IS NULL OR q.name = $2) ORDER BY q.name, s.name`, [
    tenant,
    queue ?? null,
  ]);
  const subscriptions: SubscriptionListed[] = [];
  for (const r of rows) {
    const [last] = await listAttempts(db, r.id, { limit: 1 });
    subscriptions.push({
      ...(await subscriptionView(config, r)),
      ...total(await groupPositions(db, r.id, r.queue_id, r.consumer_group)),
      lastAttempt: last ?? null,
    });
  }
  return { subscriptions };
}

export const subscriptionNotFound = (id: string) =>
  notFound('subscription_not_found', `No subscription ${id}; list them with GET /api/v1/subscriptions.`);

/** The subscription row of this tenant, or undefined (another tenant's is a missing one). */
export async function findSubscription(db: Queryable, { tenant }: TenantContext, id: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(`${ROW_OF_TENANT} AND s.id = $2`, [tenant, id]);
  return row;
}

/** The subscription row of this tenant; another tenant's is a missing one (404). */
export async function ownSubscription(db: Queryable, ctx: TenantContext, id: string): Promise<SubscriptionRow> {
  const row = await findSubscription(db, ctx, id);
  if (!row) throw subscriptionNotFound(id);
  return row;
}

/** GET /subscriptions/:id: the listing's fields, per-partition positions, counters and the last 20 attempts. */
export async function subscriptionDetail(db: Queryable, ctx: ReadContext, id: string): Promise<SubscriptionDetail> {
  const r = await ownSubscription(db, ctx, id);
  const { config } = ctx;
  const partitions = await groupPositions(db, r.id, r.queue_id, r.consumer_group);
  const attempts = await listAttempts(db, r.id, { limit: 20 });
  return {
    ...(await subscriptionView(config, r)),
    ...total(partitions),
    lastAttempt: attempts[0] ?? null,
    delivered: Number(r.delivered),
    failedAttempts: Number(r.failed_attempts),
    deadLettered: Number(r.dead_lettered),
    lastAttemptAt: iso(r.last_attempt_at),
    partitions,
    attempts,
  };
}

/** GET /subscriptions/:id/attempts: the delivery log, newest first. */
export async function subscriptionAttempts(db: Queryable, ctx: TenantContext, req: { id: string; limit: number; before?: number }) {
  const row = await ownSubscription(db, ctx, req.id);
  return { attempts: await listAttempts(db, row.id, req) };
}
