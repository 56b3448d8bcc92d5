// Delivery right after a push commits (docs/delivery.md#dispatch), one way per runtime, none of
// them holding the push's answer up for the deliveries: in process under `npm start`,
// ctx.waitUntil on workerd, an asynchronous invocation of the Deliver Lambda on AWS. Which queues
// have active subscriptions comes from a per-instance copy (lib/broker/delivery/subscribed.ts), so
// a push to a queue without one costs no query. A triggered run claims for TRIGGER_WINDOW_MS;
// retries due later and anything missed are the scheduled sweep's (lib/jobs.ts).
import { AwsClient } from 'aws4fetch';
import type { Config, Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import { runDelivery } from '../../broker/delivery/dispatch.js';
import { cachedSubscribedQueues, refreshSubscribedQueues, subscribedQueues } from '../../broker/delivery/subscribed.js';
import type { Context } from 'hono';
import type { AfterPush, BrokerEnv } from '../context.js';

export const TRIGGER_WINDOW_MS = 2_000;
const RUNS_PER_QUEUE = 1;

type Log = (message: string, err?: unknown) => void;

export interface LocalTrigger {
  afterPush: AfterPush;
  /** Stops the runs in progress claiming and waits for what they sent; no new ones start. */
  stop(): Promise<void>;
}

/**
 * `npm start`: runs in this process. One run claims for a queue at a time; pushes while it does
 * mark the queue for another run as soon as it ends or its window does (not when its slowest
 * request does), so a burst of pushes costs a few runs, not one each. Two runs at once measured
 * worse (bench/README.md#deliveryts-push-delivery): the second could find the subscription
 * locked by the first while the first's claim predated the push, leaving it to the sweep.
 */
export function localDeliveryTrigger(db: Database, config: Config, log: Log): LocalTrigger {
  const claiming = new Map<number, number>();
  const again = new Set<number>();
  const runs = new Set<Promise<unknown>>();
  const stopping = new AbortController();
  let stopped = false;

  const start = (queueIds: number[]) => {
    const ids = queueIds.filter((id) => (claiming.get(id) ?? 0) < RUNS_PER_QUEUE);
    for (const id of queueIds) if (!ids.includes(id)) again.add(id);
    if (ids.length === 0 || stopped) return;
    for (const id of ids) claiming.set(id, (claiming.get(id) ?? 0) + 1);
    const deadline = Date.now() + TRIGGER_WINDOW_MS;
    let windowOver: () => void = () => {};
    const window = new Promise<void>((resolve) => {
      windowOver = resolve;
      setTimeout(resolve, TRIGGER_WINDOW_MS).unref?.();
    });
    const run = runDelivery(db, config, { deadline, queueIds: ids, log, signal: stopping.signal })
      .catch((err: unknown) => log('delivery after a push failed (the sweep retries)', err))
      .finally(() => {
        windowOver();
        runs.delete(run);
      });
    runs.add(run);
    void window.then(() => {
      for (const id of ids) {
        const n = claiming.get(id)! - 1;
        if (n === 0) claiming.delete(id);
        else claiming.set(id, n);
      }
      const next = ids.filter((id) => again.delete(id));
      if (next.length > 0) start(next);
    });
  };

  return {
    afterPush: async (_db, tenant, queues) => {
      // Never awaited by the push: even a stale copy is read again in the background.
      void subscribedQueues(db, tenant, queues).then(
        (ids) => ids.length > 0 && start(ids),
        (err: unknown) => log('reading the subscribed queues failed (the sweep delivers)', err),
      );
    },
    async stop() {
      stopped = true;
      stopping.abort();
      while (runs.size > 0) await Promise.all(runs);
    },
  };
}

/** What a workerd trigger needs of the request that pushed: its waitUntil, and a pool of the run's own. */
export interface WorkerRequestScope {
  waitUntil(p: Promise<unknown>): void;
  /** A pool apart from the request's, which closes with the request. */
  open(): Promise<Database>;
}

/** workerd: the run goes on after the answer under ctx.waitUntil, on a pool of its own (the request's closes with it). */
export function workerDeliveryTrigger(config: Config, scope: (c: Context<BrokerEnv>) => WorkerRequestScope, log: Log): AfterPush {
  return async (_db, tenant, queues, c) => {
    const cached = cachedSubscribedQueues(tenant, queues);
    if (cached !== null && cached.length === 0) return;
    const request = scope(c);
    request.waitUntil(
      (async () => {
        const db = await request.open();
        try {
          const ids = cached ?? (await subscribedQueues(db, tenant, queues));
          if (ids.length > 0) await runDelivery(db, config, { deadline: Date.now() + TRIGGER_WINDOW_MS, queueIds: ids, log });
        } finally {
          await db.close();
        }
      })().catch((err: unknown) => log('delivery after a push failed (the sweep retries)', err)),
    );
  };
}

/**
 * AWS: an asynchronous invocation (InvocationType Event) of the Deliver function named by
 * QUEEN_DELIVER_FUNCTION, signed with the function's own credentials. Lambda answers 202 once it
 * has queued the event (and retries it twice), so the push waits for that, not for delivery.
 * The push never waits for a query: while the instance's copy of the subscribed queues is fresh
 * it decides (nothing to invoke for a queue without a subscription); when it is stale the event
 * names the queues, the Deliver function resolves them, and the copy is read again beside the
 * invocation for the next push (at most one such invocation per copy's lifetime).
 */
export function lambdaDeliveryTrigger(env: Env, log: Log): (db: Database, tenant: string, queues: readonly string[]) => Promise<void> {
  const fn = env.QUEEN_DELIVER_FUNCTION;
  if (!fn) return async () => {};
  let client: AwsClient | undefined;
  return async (db, tenant, queues) => {
    const ids = cachedSubscribedQueues(tenant, queues);
    if (ids !== null && ids.length === 0) return;
    if (ids === null) void refreshSubscribedQueues(db).catch((err: unknown) => log('reading the subscribed queues failed', err));
    const event: DeliverEvent = ids ? { queueIds: ids } : { tenant, queues: [...queues] };
    const region = env.AWS_REGION ?? 'us-east-1';
    client ??= new AwsClient({
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '',
      sessionToken: env.AWS_SESSION_TOKEN,
      region,
      service: 'lambda',
    });
    // AWS_ENDPOINT_URL_LAMBDA is the AWS SDKs' own per-service endpoint variable.
    const endpoint = env.AWS_ENDPOINT_URL_LAMBDA || `https://lambda.${region}.amazonaws.com`;
    try {
      const res = await client.fetch(`${endpoint}/2015-03-31/functions/${encodeURIComponent(fn)}/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-amz-invocation-type': 'Event' },
        body: JSON.stringify(event),
      });
      if (res.status !== 202) log(`invoking ${fn} answered ${res.status}: ${(await res.text()).slice(0, 300)} (the sweep delivers)`);
    } catch (err) {
      log(`invoking ${fn} failed (the sweep delivers)`, err);
    }
  };
}

/**
 * What the Deliver Lambda receives from a push: the queue ids with a subscription, or, when the
 * pushing instance could not say without a query, the queues it wrote. Anything else (the
 * schedule's event) is a sweep.
 */
export type DeliverEvent = { queueIds: number[] } | { tenant: string; queues: string[] };

export function isDeliverEvent(event: unknown): event is DeliverEvent {
  const e = event as { queueIds?: unknown; tenant?: unknown; queues?: unknown } | null;
  if (Array.isArray(e?.queueIds)) return e.queueIds.every((id) => Number.isSafeInteger(id));
  return typeof e?.tenant === 'string' && Array.isArray(e.queues) && e.queues.every((q) => typeof q === 'string');
}

/** The queue ids a Deliver event asks for: named queues are resolved from a fresh read of the subscriptions. */
export async function deliverEventQueues(db: Database, event: DeliverEvent): Promise<number[]> {
  if ('queueIds' in event) return event.queueIds;
  await refreshSubscribedQueues(db);
  return cachedSubscribedQueues(event.tenant, event.queues) ?? [];
}
