// Subscriptions (docs/delivery.md): a consumer group with an endpoint. Creating one provisions the
// queue as a push would and records the group's start as a first pop would, so seek, lag and the
// consumer-group routes treat it like any group. Secrets and header values are stored sealed.
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../../config.js';
import type { ReadContext, TenantContext } from '../context.js';
import type { Database, Queryable } from '../../db/types.js';
import { QueenError } from '../../errors.js';
import { checkEndpointUrl } from './endpoint.js';
import type { SecretRotated, Subscription, SubscriptionCreated } from '../../../client/src/wire.js';
import { mintWebhookSecret, openText, sealText } from './secrets.js';
import { forgetSubscribedQueues } from './subscribed.js';
import { SUBSCRIPTION_COLUMNS, subscriptionNotFound, subscriptionView, type SubscriptionRow } from './views.js';

export const OPTION_RANGES = {
  batchSize: { min: 1, max: 1000, default: 10 },
  maxInFlight: { min: 1, max: 1000, default: 16 },
  timeoutMs: { min: 1000, max: 25_000, default: 15_000 },
  rateLimit: { min: 0, max: 100_000, default: 0 },
  retryBaseMs: { min: 100, max: 3_600_000, default: 1000 },
  retryMaxMs: { min: 1000, max: 86_400_000, default: 300_000 },
  disableAfterMs: { min: 60_000, max: 30 * 86_400_000, default: 86_400_000 },
} as const;

export type RangedOption = keyof typeof OPTION_RANGES;

export interface SubscriptionOptions extends Record<RangedOption, number> {
  subscriptionMode: 'all' | 'new';
  headers: Record<string, string>;
}

export const MAX_URL_LENGTH = 2048;
export const MAX_HEADERS = 32;
export const MAX_HEADER_VALUE_LENGTH = 4096;
/** Set by the broker on every delivery; a name ending in `-` is a prefix. */
export const RESERVED_HEADERS = ['content-type', 'content-length', 'host', 'connection', 'transfer-encoding', 'webhook-', 'queen-'];
export const DEFAULT_ATTEMPT_PAGE = 100;
export const MAX_ATTEMPT_PAGE = 1000;
export const DEFAULT_REDRIVE_LIMIT = 1000;
export const MAX_REDRIVE_LIMIT = 100_000;
/** How long a rotated-out secret still signs. */
const PREVIOUS_SECRET_HOURS = 24;

export interface NewSubscription {
  queue: string;
  name: string;
  url: string;
  consumerGroup: string;
  options: Partial<SubscriptionOptions>;
}

export interface SubscriptionChange {
  url?: string;
  state?: 'active' | 'paused';
  options: Partial<SubscriptionOptions>;
}

export type DeliveryContext = ReadContext;

const defaults = (): SubscriptionOptions => ({
  ...(Object.fromEntries(Object.entries(OPTION_RANGES).map(([k, r]) => [k, r.default])) as Record<RangedOption, number>),
  subscriptionMode: 'all',
  headers: {},
});

function checkRetryRange(o: Pick<SubscriptionOptions, 'retryBaseMs' | 'retryMaxMs'>): void {
  if (o.retryMaxMs < o.retryBaseMs) {
    throw new QueenError(
      400,
      'invalid_request',
      `options.retryMaxMs (${o.retryMaxMs}) must be at least options.retryBaseMs (${o.retryBaseMs}).`,
    );
  }
}

const checkUrl = (ctx: DeliveryContext, url: string) => checkEndpointUrl(url, { allowPrivate: ctx.config.deliveryAllowPrivate });

/** 201's body: the subscription with its secret, the only time it is shown besides rotation. */
export async function createSubscription(db: Database, ctx: DeliveryContext, req: NewSubscription): Promise<SubscriptionCreated> {
  const o = { ...defaults(), ...req.options };
  checkRetryRange(o);
  await checkUrl(ctx, req.url);
  const secret = mintWebhookSecret();
  const sealedSecret = await sealText(ctx.config, secret);
  const sealedHeaders = await sealText(ctx.config, JSON.stringify(o.headers));
  const row = await db.transaction(async (tx) => {
    const [queue] = await tx.query<{ id: string }>(`SELECT id FROM queen.ensure_queue(p_tenant => $1, p_name => $2)`, [
      ctx.tenant,
      req.queue,
    ]);
    const taken = await tx.query<{ name: string; consumer_group: string }>(
      `SELECT name, consumer_group FROM queen.subscriptions WHERE queue_id = $1 AND (name = $2 OR consumer_group = $3) FOR UPDATE`,
      [queue!.id, req.name, req.consumerGroup],
    );
    if (taken.length > 0) throw subscriptionExists(req, taken[0]!);
    // The group's start, exactly as pop records it (docs/semantics.md#subscriptions); an existing
    // group keeps the start it has.
    await tx.query(
      `INSERT INTO queen.consumer_subscriptions (queue_id, consumer_group, mode, start_at, subscribed_at, scanned_at)
       SELECT $1, $2, $3, s, now(), s FROM (SELECT CASE WHEN $3 = 'new' THEN now() END AS s) x
       ON CONFLICT DO NOTHING`,
      [queue!.id, req.consumerGroup, o.subscriptionMode],
    );
    const inserted = await tx.query<SubscriptionRow>(
      `INSERT INTO queen.subscriptions AS s (id, tenant_id, queue_id, name, consumer_group, url, batch_size, max_in_flight, timeout_ms,
         rate_limit, retry_base_ms, retry_max_ms, subscription_mode, disable_after_ms, headers, secret)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
       ON CONFLICT (queue_id, name) DO NOTHING
       RETURNING ${SUBSCRIPTION_COLUMNS}, $17::text AS queue`,
      [
        uuidv7(),
        ctx.tenant,
        queue!.id,
        req.name,
        req.consumerGroup,
        req.url,
        o.batchSize,
        o.maxInFlight,
        o.timeoutMs,
        o.rateLimit,
        o.retryBaseMs,
        o.retryMaxMs,
        o.subscriptionMode,
        o.disableAfterMs,
        sealedHeaders,
        sealedSecret,
        req.queue,
      ],
    );
    if (inserted.length === 0) throw subscriptionExists(req, { name: req.name, consumer_group: '' });
    return inserted[0]!;
  });
  // This instance's next push to the queue triggers delivery at once, not after the copy expires.
  forgetSubscribedQueues();
  return { ...(await subscriptionView(ctx.config, row)), secret };
}

function subscriptionExists(req: NewSubscription, taken: { name: string; consumer_group: string }) {
  const why =
    taken.name === req.name
      ? `Queue "${req.queue}" already has a subscription named "${req.name}"`
      : `Subscription "${taken.name}" already delivers consumer group "${req.consumerGroup}" of queue "${req.queue}"`;
  return new QueenError(
    409,
    'subscription_exists',
    `${why}; choose another name or consumerGroup, or change it with PATCH /api/v1/subscriptions/:id.`,
  );
}

/** The subscription row of this tenant, locked for a change. */
async function lockSubscription(tx: Queryable, tenant: string, id: string): Promise<SubscriptionRow> {
  const [row] = await tx.query<SubscriptionRow>(
    `SELECT ${SUBSCRIPTION_COLUMNS}, q.name AS queue FROM queen.subscriptions s JOIN queen.queues q ON q.id = s.queue_id
      WHERE s.id = $1 AND s.tenant_id = $2 FOR UPDATE OF s`,
    [id, tenant],
  );
  if (!row) throw subscriptionNotFound(id);
  return row;
}

/** PATCH: url, options and state; resuming clears the pause reason and the failing streak. */
export async function updateSubscription(
  db: Database,
  ctx: DeliveryContext,
  id: string,
  change: SubscriptionChange,
): Promise<Subscription> {
  if (change.url !== undefined) await checkUrl(ctx, change.url);
  const { headers, ...ranged } = change.options;
  const sealedHeaders = headers === undefined ? null : await sealText(ctx.config, JSON.stringify(headers));
  const row = await db.transaction(async (tx) => {
    const current = await lockSubscription(tx, ctx.tenant, id);
    checkRetryRange({ retryBaseMs: ranged.retryBaseMs ?? current.retry_base_ms, retryMaxMs: ranged.retryMaxMs ?? current.retry_max_ms });
    const [updated] = await tx.query<SubscriptionRow>(
      `UPDATE queen.subscriptions s SET
          url = coalesce($2, url),
          batch_size = coalesce($3, batch_size), max_in_flight = coalesce($4, max_in_flight), timeout_ms = coalesce($5, timeout_ms),
          rate_limit = coalesce($6, rate_limit), retry_base_ms = coalesce($7, retry_base_ms), retry_max_ms = coalesce($8, retry_max_ms),
          disable_after_ms = coalesce($9, disable_after_ms), headers = coalesce($10, headers),
          state = coalesce($11, state),
          paused_reason = CASE $11 WHEN 'active' THEN NULL WHEN 'paused' THEN coalesce(paused_reason, 'paused_by_user') ELSE paused_reason END,
          failing_since = CASE WHEN $11 = 'active' THEN NULL ELSE failing_since END,
          updated_at = now()
        WHERE s.id = $1
        RETURNING ${SUBSCRIPTION_COLUMNS}, $12::text AS queue`,
      [
        id,
        change.url ?? null,
        ranged.batchSize ?? null,
        ranged.maxInFlight ?? null,
        ranged.timeoutMs ?? null,
        ranged.rateLimit ?? null,
        ranged.retryBaseMs ?? null,
        ranged.retryMaxMs ?? null,
        ranged.disableAfterMs ?? null,
        sealedHeaders,
        change.state ?? null,
        current.queue,
      ],
    );
    return updated!;
  });
  forgetSubscribedQueues();
  return subscriptionView(ctx.config, row);
}

/** Stops deliveries; the group's cursors stay (deleting the group is its own route). */
export async function deleteSubscription(db: Queryable, { tenant }: TenantContext, id: string) {
  const rows = await db.query(`DELETE FROM queen.subscriptions WHERE id = $1 AND tenant_id = $2 RETURNING id`, [id, tenant]);
  if (rows.length === 0) throw subscriptionNotFound(id);
  forgetSubscribedQueues();
  return { success: true as const, id, deleted: true as const };
}

/** A new secret; the one it replaces keeps signing for 24 hours so receivers can switch over. */
export async function rotateSecret(db: Database, ctx: DeliveryContext, id: string): Promise<SecretRotated> {
  const secret = mintWebhookSecret();
  const sealed = await sealText(ctx.config, secret);
  const [row] = await db.query<{ previous_secret_until: Date }>(
    `UPDATE queen.subscriptions SET previous_secret = secret, secret = $3,
            previous_secret_until = now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS}), updated_at = now()
      WHERE id = $1 AND tenant_id = $2
      RETURNING previous_secret_until`,
    [id, ctx.tenant, sealed],
  );
  if (!row) throw subscriptionNotFound(id);
  return { id, secret, previousSecretValidUntil: row.previous_secret_until.toISOString() };
}

/** The secrets that sign a delivery now: the current one, then the previous one while it is valid. */
export async function signingSecrets(
  config: Config,
  row: { secret: string; previous_secret: string | null; previous_secret_until: Date | null },
  now = new Date(),
): Promise<string[]> {
  const secrets = [await openText(config, row.secret)];
  if (row.previous_secret && row.previous_secret_until && row.previous_secret_until > now)
    secrets.push(await openText(config, row.previous_secret));
  return secrets;
}

/** The extra headers a delivery carries, opened. */
export async function endpointHeaders(config: Config, sealed: string): Promise<Record<string, string>> {
  return JSON.parse(await openText(config, sealed)) as Record<string, string>;
}
