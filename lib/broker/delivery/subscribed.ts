// Which queues have an active subscription, so a push knows whether to trigger delivery without a
// query of its own (docs/delivery.md#dispatch). A per-instance copy read at most every
// SUBSCRIBED_TTL_MS: safe to lose or to be stale, since the scheduled sweep delivers whatever a
// trigger missed (a subscription made on another instance, at worst that much later).
import type { Queryable } from '../../db/types.js';

export const SUBSCRIBED_TTL_MS = 5_000;

const SUBSCRIBED_SQL = `SELECT DISTINCT s.tenant_id, q.name, s.queue_id
  FROM queen.subscriptions s JOIN queen.queues q ON q.id = s.queue_id
 WHERE s.state = 'active'`;

const key = (tenant: string, queue: string) => `${tenant}\u0000${queue}`;

let known = new Map<string, number>();
let readAt = -Infinity;
let reading: Promise<void> | null = null;
// Bumped by forgetSubscribedQueues: a read that began before it may have missed the change.
let generation = 0;

/** The queue ids among `queues` with an active subscription, or null when the copy is too old to say. */
export function cachedSubscribedQueues(tenant: string, queues: readonly string[], now = Date.now()): number[] | null {
  return now - readAt > SUBSCRIBED_TTL_MS ? null : lookup(tenant, queues);
}

function lookup(tenant: string, queues: readonly string[]): number[] {
  const ids = new Set<number>();
  for (const q of queues) {
    const id = known.get(key(tenant, q));
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}

/** Reads the active subscriptions again (one query; concurrent callers share it). */
export function refreshSubscribedQueues(db: Queryable): Promise<void> {
  if (reading) return reading;
  const started = generation;
  const read: Promise<void> = db
    .query<{ tenant_id: string; name: string; queue_id: string }>(SUBSCRIBED_SQL)
    .then((rows) => {
      // A read that began before a change on this instance may have missed it: not kept.
      if (started !== generation) return;
      known = new Map(rows.map((r) => [key(r.tenant_id, r.name), Number(r.queue_id)]));
      readAt = Date.now();
    })
    .finally(() => {
      if (reading === read) reading = null;
    });
  reading = read;
  return read;
}

/** The queue ids among `queues` with an active subscription, reading them again when the copy is old. */
export async function subscribedQueues(db: Queryable, tenant: string, queues: readonly string[]): Promise<number[]> {
  const cached = cachedSubscribedQueues(tenant, queues);
  if (cached) return cached;
  await refreshSubscribedQueues(db);
  return lookup(tenant, queues);
}

/** After a subscription changes on this instance: the next push reads them again. */
export function forgetSubscribedQueues(): void {
  readAt = -Infinity;
  generation++;
  reading = null;
}
