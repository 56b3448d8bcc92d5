// Delivery under `npm start`: a push to a subscribed queue reaches the endpoint at once, started in
// process by the push itself (the sweep's timer is off here), without holding up the push's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { checkout, startServer, waitFor, type RunningServer } from '../support/server.js';
import { receiver, type Receiver } from '../delivery/helpers.js';

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('delivery under npm start', () => {
  let server: RunningServer;
  let db: TestDatabase | undefined;
  let disposeCheckout: () => Promise<void>;
  const secrets = new Map<string, string>();
  let fast: Receiver;
  let slow: Receiver;

  beforeAll(async () => {
    const co = await checkout();
    disposeCheckout = co.dispose;
    db = testMode() === 'pg' ? await freshDatabase() : undefined;
    fast = await receiver(secrets);
    slow = await receiver(secrets, () => new Promise((r) => setTimeout(() => r({ status: 200 }), 3_000)));
    server = await startServer(co.dir, {
      DATABASE_URL: db?.url ?? '',
      QUEEN_DELIVERY_ALLOW_PRIVATE: '1',
      DELIVERY_INTERVAL: 'off',
      RETENTION_INTERVAL: 'off',
    });
    for (const [queue, r] of [
      ['orders', fast],
      ['slow-orders', slow],
    ] as const) {
      const res = await post(`${server.url}/api/v1/subscriptions`, { queue, name: 'hook', url: r.url });
      expect(res.status).toBe(201);
      const sub = (await res.json()) as { id: string; secret: string };
      secrets.set(sub.id, sub.secret);
    }
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await Promise.all([fast?.close(), slow?.close()]);
    await db?.dispose();
    await disposeCheckout?.();
  });

  it('prints that the sweep is off when its interval says so', () => {
    expect(server.output()).toContain('no scheduled jobs');
  });

  it('delivers a push to a subscribed queue at once, signed, with no sweep running to do it', async () => {
    const t0 = performance.now();
    const res = await post(`${server.url}/api/v1/push`, { items: [{ queue: 'orders', partition: 'p1', payload: { id: 1 } }] });
    expect(res.status).toBe(201);
    await waitFor('the delivery', () => fast.arrivals.length > 0, 5_000);
    // The sweep is off: only the push's trigger can have sent it. (The first push of a server on a
    // busy machine warms PGlite and the codecs; later ones take milliseconds.)
    expect(fast.arrivals[0]!.at - t0).toBeLessThan(3_000);
    expect(fast.badSignatures).toEqual([]);
    expect(fast.arrivals[0]!.body).toMatchObject({ queue: 'orders', partition: 'p1', messages: [{ offset: 0, data: { id: 1 } }] });
  });

  it('delivers the pushes of a committed transaction, and nothing of a rolled-back one', async () => {
    const before = fast.arrivals.length;
    const ok = await post(`${server.url}/api/v1/transaction`, {
      operations: [{ type: 'push', items: [{ queue: 'orders', partition: 'p2', payload: { id: 2 } }] }],
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { success: boolean }).success).toBe(true);
    await waitFor('the transaction push', () => fast.arrivals.length > before, 5_000);
    expect(fast.arrivals.at(-1)!.body).toMatchObject({ partition: 'p2', messages: [{ data: { id: 2 } }] });
  });

  it('answers the push before a slow endpoint has answered the delivery it started', async () => {
    const t0 = performance.now();
    const res = await post(`${server.url}/api/v1/push`, { items: [{ queue: 'slow-orders', payload: { id: 3 } }] });
    const answered = performance.now();
    expect(res.status).toBe(201);
    await waitFor('the slow delivery to arrive', () => slow.arrivals.length > 0, 5_000);
    expect(answered - t0).toBeLessThan(1_000);
    await waitFor('the slow endpoint to answer', () => slow.arrivals[0]!.answeredAt > 0, 10_000);
    expect(slow.arrivals[0]!.answeredAt - t0).toBeGreaterThan(2_500);
  });

  it('stops cleanly with deliveries in flight', async () => {
    await post(`${server.url}/api/v1/push`, { items: [{ queue: 'slow-orders', payload: { id: 4 } }] });
    await waitFor('the second slow delivery', () => slow.arrivals.length > 1, 5_000);
    expect(await server.stop()).toBe(0);
    expect(server.output()).toContain('stopped cleanly');
  }, 30_000);
});
