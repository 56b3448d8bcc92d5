// maxInFlight and rateLimit as the endpoint sees them, with two dispatchers at once (each on its
// own connections on the real server).
import { afterEach, describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import type { Database } from '../../lib/db/types.js';
import { useDatabase } from '../support/db.js';
import { config, pushTo, receiver, sleep, subscribe, useSecondConnection, type Receiver } from './helpers.js';

const db = useDatabase();
const secondConnection = useSecondConnection(db);
let open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.map((r) => r.close()));
  open = [];
});

/** Two dispatchers, each running again when its run ends, until `done()` or 30 s. */
async function twoDispatchers(done: () => boolean) {
  const other = await secondConnection();
  const deadline = Date.now() + 30_000;
  const loop = async (d: Database) => {
    while (!done() && Date.now() < deadline) {
      await runDelivery(d, config, { deadline });
      await sleep(5);
    }
  };
  await Promise.all([loop(db()), loop(other)]);
}

const received = (r: Receiver) => r.arrivals.reduce((n, a) => n + a.body.messages.length, 0);

describe('flow control', () => {
  it('never has more than maxInFlight partitions in flight at the endpoint, across dispatchers', async () => {
    const r = await receiver(new Map(), async () => {
      await sleep(60);
      return { status: 200 };
    });
    open.push(r);
    await subscribe(db(), 'inflight', 'i', r.url, { batchSize: 2, maxInFlight: 3 });
    const partitions = Array.from({ length: 12 }, (_, i) => `p${i}`);
    await pushTo(db(), 'inflight', partitions, 4);
    await twoDispatchers(() => received(r) >= 48);
    expect(received(r)).toBe(48);
    expect(r.maxOpen).toBe(3);
  });

  it('holds rateLimit (messages per second) across dispatchers, measured by the receiver', async () => {
    const r = await receiver(new Map(), () => ({ status: 200 }));
    open.push(r);
    const rate = 40;
    await subscribe(db(), 'rated', 'r', r.url, { batchSize: 4, maxInFlight: 8, rateLimit: rate });
    await pushTo(
      db(),
      'rated',
      Array.from({ length: 8 }, (_, i) => `p${i}`),
      12,
    );
    const started = performance.now();
    // Each run waits for the bucket to refill rather than leave the backlog to the next sweep.
    const other = await secondConnection();
    const deadline = Date.now() + 10_000;
    await Promise.all([runDelivery(db(), config, { deadline }), runDelivery(other, config, { deadline })]);
    expect(received(r)).toBe(96);
    // The bucket holds half a second of messages: by any time t after the start, at most
    // rate/2 + rate·t arrived (plus a claim's round trip of slack).
    let count = 0;
    for (const a of r.arrivals) {
      count += a.body.messages.length;
      const t = (a.at - started) / 1000;
      expect(count).toBeLessThanOrEqual(rate / 2 + rate * (t + 0.05));
    }
    const seconds = (r.arrivals.at(-1)!.at - started) / 1000;
    expect(seconds).toBeGreaterThanOrEqual((96 - rate / 2) / rate - 0.1);
    expect(seconds).toBeLessThan(96 / rate + 2);
  });

  it('sends a retry under rateLimit as the same whole batch once the bucket refills, even a batch bigger than the bucket', async () => {
    const r = await receiver(new Map(), (_a, i) => ({ status: i === 0 ? 500 : 200 }));
    open.push(r);
    // 4 messages a second: the bucket holds 2, a batch is 5.
    await subscribe(db(), 'rated-retry', 'rr', r.url, { batchSize: 5, rateLimit: 4, retryBaseMs: 10, retryMaxMs: 10 });
    await pushTo(db(), 'rated-retry', ['p'], 5);
    await runDelivery(db(), config, { deadline: Date.now() + 10_000 });
    expect(r.arrivals.map((a) => a.body.messages.map((m) => m.offset))).toEqual([
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
    ]);
    expect(r.arrivals[1]!.headers['webhook-id']).toBe(r.arrivals[0]!.headers['webhook-id']);
    // The first batch owed 3 tokens: the retry waited for the bucket to fill again (5 tokens at 4/s).
    expect(r.arrivals[1]!.at - r.arrivals[0]!.at).toBeGreaterThanOrEqual(1100);
  });
});
