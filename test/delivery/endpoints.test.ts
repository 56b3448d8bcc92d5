// Failing, gone, throttling, slow and partially acking endpoints, against real HTTP receivers.
import { afterEach, describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import { useDatabase } from '../support/db.js';
import { configureQueue, cursor } from '../pop/helpers.js';
import {
  attempts,
  config,
  offsetsByPartition,
  pushTo,
  receiver,
  sleep,
  subscribe,
  subscriptionRow,
  type Handler,
  type Receiver,
} from './helpers.js';

const db = useDatabase();
const run = (ms = 15_000) => runDelivery(db(), config, { deadline: Date.now() + ms });
let open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.map((r) => r.close()));
  open = [];
});

async function endpoint(handler: Handler) {
  const r = await receiver(new Map(), handler);
  open.push(r);
  return r;
}

const dlqOffsets = async (group: string) =>
  (
    await db().query<{ msg_offset: string }>('SELECT msg_offset FROM queen.log_dlq WHERE consumer_group = $1 ORDER BY msg_offset', [group])
  ).map((r) => Number(r.msg_offset));

describe('a failing endpoint', () => {
  it('gets the same messages under the same webhook-id until the retry budget is spent, then the first goes to the DLQ and the partition goes on', async () => {
    const r = await endpoint((a) => ({ status: a.body.messages[0]!.offset === 0 ? 500 : 200 }));
    const sub = await subscribe(db(), 'failing', 'f', r.url, { retryBaseMs: 20, retryMaxMs: 40, batchSize: 3 });
    await configureQueue(db(), 'failing', 'retry_limit = 2');
    await pushTo(db(), 'failing', ['p'], 3);

    const report = await run();
    const ids = r.arrivals.map((a) => a.headers['webhook-id']);
    expect(r.arrivals.map((a) => a.body.messages.map((m) => m.offset))).toEqual([
      [0, 1, 2],
      [0, 1, 2],
      [0, 1, 2],
      [1, 2],
    ]);
    expect(new Set(ids.slice(0, 3)).size).toBe(1);
    expect(ids[3]).not.toBe(ids[0]);
    expect(r.arrivals.map((a) => a.headers['queen-attempt'])).toEqual(['1', '2', '3', '1']);
    expect(r.arrivals.every((a) => a.headers['queen-max-attempts'] === '3')).toBe(true);
    expect(await dlqOffsets('f')).toEqual([0]);
    expect((await cursor(db(), 'failing', 'p', 'f')).committed).toBe('2');
    expect(report).toMatchObject({ batches: 4, delivered: 2, failed: 3, deadLettered: 1 });
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({
      failed_attempts: '3',
      dead_lettered: '1',
      delivered: '2',
      failing_since: null,
      state: 'active',
    });
    expect((await attempts(db(), sub.id)).map((a) => [a.outcome, a.status, a.attempt])).toEqual([
      ['failed', 500, 1],
      ['failed', 500, 2],
      ['dead_lettered', 500, 3],
      ['delivered', 200, 1],
    ]);
  });

  it('skips the first message past the budget when the queue has no DLQ, and logs the attempt as failed', async () => {
    const r = await endpoint((a) => ({ status: a.body.messages[0]!.offset === 0 ? 500 : 200 }));
    const sub = await subscribe(db(), 'no-dlq', 'n', r.url, { retryBaseMs: 5, retryMaxMs: 5 });
    await configureQueue(db(), 'no-dlq', 'retry_limit = 0, dead_letter_queue = false');
    await pushTo(db(), 'no-dlq', ['p'], 2);
    await run();
    expect(r.arrivals.map((a) => a.body.messages.map((m) => m.offset))).toEqual([[0, 1], [1]]);
    expect(await dlqOffsets('n')).toEqual([]);
    expect((await attempts(db(), sub.id)).map((a) => a.outcome)).toEqual(['failed', 'delivered']);
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({ dead_lettered: '0', delivered: '1', failed_attempts: '1' });
  });

  it('waits a full-jitter back-off between attempts, never more than retryMaxMs', async () => {
    const r = await endpoint(() => ({ status: 502 }));
    await subscribe(db(), 'backoff', 'b', r.url, { retryBaseMs: 100, retryMaxMs: 150 });
    await configureQueue(db(), 'backoff', 'retry_limit = 3');
    await pushTo(db(), 'backoff', ['p'], 1);
    await run();
    expect(r.arrivals).toHaveLength(4);
    const gaps = r.arrivals.slice(1).map((a, i) => a.at - r.arrivals[i]!.answeredAt);
    // Ceilings 100, 150 (capped), 150 ms, plus a claim's round trip.
    for (const g of gaps) expect(g).toBeLessThan(150 + 400);
  });

  it('counts a timeout as a failed attempt, with the error in the attempts log', async () => {
    const r = await endpoint(async (_a, i) => {
      if (i === 0) await sleep(1500);
      return { status: 200 };
    });
    const sub = await subscribe(db(), 'slow', 's', r.url, { timeoutMs: 1000, retryBaseMs: 10, retryMaxMs: 10 });
    await pushTo(db(), 'slow', ['p'], 2);
    await run();
    const log = await attempts(db(), sub.id);
    expect(log.map((a) => a.outcome)).toEqual(['failed', 'delivered']);
    expect(log[0]).toMatchObject({ status: null });
    expect(log[0]!.error).toMatch(/timeout/i);
    expect(log[0]!.latency_ms).toBeGreaterThanOrEqual(900);
    expect(r.arrivals[1]!.headers['webhook-id']).toBe(r.arrivals[0]!.headers['webhook-id']);
  });

  it('pauses the subscription as endpoint_failing after disableAfterMs of nothing but failures', async () => {
    const r = await endpoint(() => ({ status: 500 }));
    const sub = await subscribe(db(), 'failing-long', 'fl', r.url, { retryBaseMs: 100, retryMaxMs: 100, disableAfterMs: 250 });
    await configureQueue(db(), 'failing-long', 'retry_limit = 100');
    await pushTo(db(), 'failing-long', ['p'], 1);
    await run();
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({ state: 'paused', paused_reason: 'endpoint_failing' });
    const n = r.arrivals.length;
    expect(n).toBeGreaterThanOrEqual(2);
    expect((await run()).batches).toBe(0);
    expect((await cursor(db(), 'failing-long', 'p', 'fl')).committed).toBe('-1');
  });
});

describe('an endpoint that answers 410', () => {
  it('pauses the subscription as endpoint_gone, and a resume sends the same batch again', async () => {
    let gone = true;
    const r = await endpoint(() => ({ status: gone ? 410 : 200 }));
    const sub = await subscribe(db(), 'gone', 'g', r.url);
    await pushTo(db(), 'gone', ['p'], 2);
    await run();
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({ state: 'paused', paused_reason: 'endpoint_gone', failed_attempts: '0' });
    expect((await cursor(db(), 'gone', 'p', 'g')).committed).toBe('-1');
    gone = false;
    await db().query(`UPDATE queen.subscriptions SET state = 'active', paused_reason = NULL WHERE id = $1`, [sub.id]);
    await run();
    expect(r.arrivals).toHaveLength(2);
    expect(r.arrivals[1]!.headers['webhook-id']).toBe(r.arrivals[0]!.headers['webhook-id']);
    expect(r.arrivals[1]!.headers['queen-attempt']).toBe('1');
    expect((await cursor(db(), 'gone', 'p', 'g')).committed).toBe('1');
  });
});

describe('a throttling endpoint', () => {
  it('waits at least Retry-After for the whole subscription and is not charged', async () => {
    const r = await endpoint((_a, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const sub = await subscribe(db(), 'throttle', 't', r.url, { maxInFlight: 1, retryBaseMs: 10 });
    await configureQueue(db(), 'throttle', 'retry_limit = 0');
    await pushTo(db(), 'throttle', ['a', 'b'], 1);
    await run();
    expect(r.arrivals).toHaveLength(3);
    expect(r.arrivals[1]!.at - r.arrivals[0]!.answeredAt).toBeGreaterThanOrEqual(950);
    expect(r.arrivals.map((a) => a.headers['queen-attempt'])).toEqual(['1', '1', '1']);
    const first = r.arrivals[0]!;
    const again = r.arrivals.find((a, i) => i > 0 && a.body.partition === first.body.partition)!;
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(await dlqOffsets('t')).toEqual([]);
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({ failed_attempts: '0', delivered: '2' });
    expect((await attempts(db(), sub.id)).map((a) => a.outcome)).toEqual(['throttled', 'delivered', 'delivered']);
  });
});

describe('acks in the answer', () => {
  it('applies them as one ack batch: named failures retried, dlq moved at once, the rest completed', async () => {
    const r = await endpoint((a, i) => {
      if (i === 0)
        return {
          status: 200,
          body: JSON.stringify({
            acks: [
              { transactionId: 'p-3', status: 'dlq', error: 'bad' },
              { offset: 5, status: 'completed' },
            ],
          }),
        };
      if (i === 1)
        return { status: 200, body: JSON.stringify({ acks: [{ offset: a.body.messages[1]!.offset, status: 'failed', error: 'later' }] }) };
      return { status: 200 };
    });
    const sub = await subscribe(db(), 'acks', 'k', r.url, { batchSize: 10, retryBaseMs: 10, retryMaxMs: 10 });
    await pushTo(db(), 'acks', ['p'], 8);
    await run();
    const seen = r.arrivals.map((a) => a.body.messages.map((m) => m.offset));
    expect(seen[0]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(seen[1]).toEqual([4, 5, 6, 7]);
    expect(seen[2]).toEqual([5, 6, 7]);
    expect(r.arrivals[2]!.headers['queen-attempt']).toBe('2');
    expect(seen).toHaveLength(3);
    expect(await dlqOffsets('k')).toEqual([3]);
    const [dead] = await db().query<{ error_message: string }>('SELECT error_message FROM queen.log_dlq WHERE consumer_group = $1', ['k']);
    expect(dead!.error_message).toBe('bad');
    expect((await cursor(db(), 'acks', 'p', 'k')).committed).toBe('7');
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({ dead_lettered: '1', delivered: '7' });
  });
});

describe('isolation', () => {
  it('a slow endpoint does not delay another subscription', async () => {
    const slow = await endpoint(async () => {
      await sleep(4000);
      return { status: 200 };
    });
    const fast = await endpoint(() => ({ status: 200 }));
    await subscribe(db(), 'iso-slow', 'slow', slow.url, { batchSize: 1, maxInFlight: 2 });
    await subscribe(db(), 'iso-fast', 'fast', fast.url, { batchSize: 1, maxInFlight: 2 });
    await pushTo(db(), 'iso-slow', ['a', 'b'], 2);
    await pushTo(db(), 'iso-fast', ['a', 'b'], 6);
    await run();
    expect(fast.arrivals).toHaveLength(12);
    expect(slow.arrivals).toHaveLength(4);
    // Every fast batch went through while the slow endpoint still held its first two requests.
    const fastDone = Math.max(...fast.arrivals.map((a) => a.answeredAt));
    expect(fastDone).toBeLessThan(Math.min(...slow.arrivals.map((a) => a.answeredAt)));
    expect(offsetsByPartition(fast.arrivals).get('a')).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
