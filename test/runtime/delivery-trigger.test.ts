// How a push learns, without a query of its own, which of its queues have an active subscription:
// the per-instance copy of lib/broker/delivery/subscribed.ts, on a real database.
import { describe, expect, it } from 'vitest';
import {
  cachedSubscribedQueues,
  forgetSubscribedQueues,
  refreshSubscribedQueues,
  SUBSCRIBED_TTL_MS,
  subscribedQueues,
} from '../../lib/broker/delivery/subscribed.js';
import type { Queryable } from '../../lib/db/types.js';
import { useDatabase } from '../support/db.js';
import { subscribe } from '../delivery/helpers.js';

const queueId = async (db: Queryable, name: string) =>
  Number((await db.query<{ id: string }>('SELECT id FROM queen.queues WHERE name = $1', [name]))[0]!.id);

describe('the subscribed-queue copy', () => {
  const db = useDatabase();

  it('answers from memory while fresh, with one query per SUBSCRIBED_TTL_MS at most', async () => {
    await subscribe(db(), 'sub-a', 'hook', 'http://127.0.0.1:9/hook');
    let queries = 0;
    const counting: Queryable = { query: (text: string, params?: unknown[]) => (queries++, db().query(text, params)) } as Queryable;
    forgetSubscribedQueues();
    expect(await subscribedQueues(counting, 'default', ['sub-a', 'plain'])).toEqual([await queueId(db(), 'sub-a')]);
    for (let i = 0; i < 100; i++) await subscribedQueues(counting, 'default', ['plain']);
    expect(queries).toBe(1);
    expect(cachedSubscribedQueues('default', ['sub-a'], Date.now() + SUBSCRIBED_TTL_MS + 1)).toBeNull();
    // Another tenant's queue of the same name has no subscription.
    expect(await subscribedQueues(counting, 'acme', ['sub-a'])).toEqual([]);
  });

  it('leaves out paused subscriptions and sees a new one after forgetSubscribedQueues', async () => {
    const b = await subscribe(db(), 'sub-b', 'hook', 'http://127.0.0.1:9/hook');
    await db().query("UPDATE queen.subscriptions SET state = 'paused', paused_reason = 'paused_by_user' WHERE id = $1", [b.id]);
    forgetSubscribedQueues();
    expect(await subscribedQueues(db(), 'default', ['sub-b'])).toEqual([]);
    await subscribe(db(), 'sub-c', 'hook', 'http://127.0.0.1:9/hook');
    expect(await subscribedQueues(db(), 'default', ['sub-c'])).toEqual([]);
    forgetSubscribedQueues();
    expect(await subscribedQueues(db(), 'default', ['sub-c'])).toEqual([await queueId(db(), 'sub-c')]);
  });

  it('does not keep as fresh a read that began before a subscription changed here', async () => {
    forgetSubscribedQueues();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const slow: Queryable = { query: async (text: string, params?: unknown[]) => (await gate, db().query(text, params)) } as Queryable;
    const stale = refreshSubscribedQueues(slow);
    await subscribe(db(), 'sub-d', 'hook', 'http://127.0.0.1:9/hook');
    forgetSubscribedQueues();
    release();
    await stale;
    expect(cachedSubscribedQueues('default', ['sub-d'])).toBeNull();
    expect(await subscribedQueues(db(), 'default', ['sub-d'])).toEqual([await queueId(db(), 'sub-d')]);
  });
});
