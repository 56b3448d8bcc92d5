// Two dispatchers at once over 16 partitions: per partition one batch in flight, offsets in order,
// nothing lost, retries resending exactly the failed batch.
import { describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import type { Database } from '../../lib/db/types.js';
import { useDatabase } from '../support/db.js';
import { configureQueue } from '../pop/helpers.js';
import { config, pushTo, receiver, sleep, subscribe, useSecondConnection, type Arrival } from './helpers.js';

const db = useDatabase();
const secondConnection = useSecondConnection(db);

describe('two dispatchers over 16 partitions', () => {
  it('deliver every partition in offset order, one batch at a time, nothing lost', async () => {
    const partitions = Array.from({ length: 16 }, (_, i) => `p${i}`);
    let calls = 0;
    const secrets = new Map<string, string>();
    const r = await receiver(secrets, async () => {
      calls += 1;
      await sleep(Math.floor(Math.random() * 15));
      // Every ninth answer fails: the retry must be the same batch, and order must survive it.
      return { status: calls % 9 === 0 ? 500 : 200 };
    });
    const sub = await subscribe(db(), 'ordered', 'o', r.url, { batchSize: 7, maxInFlight: 16, retryBaseMs: 5, retryMaxMs: 20 });
    secrets.set(sub.id, sub.secret);
    await configureQueue(db(), 'ordered', 'retry_limit = 50');
    for (let round = 0; round < 5; round++) await pushTo(db(), 'ordered', partitions, 5, round * 5);

    const other = await secondConnection();
    const deadline = Date.now() + 30_000;
    const accepted = () => r.arrivals.filter((x) => x.status === 200).reduce((n, x) => n + x.body.messages.length, 0);
    // Each dispatcher runs again as soon as its run ends (as triggers and sweeps would), so both
    // keep claiming while the other's batches are in flight.
    let running = 0;
    let overlapped = 0;
    const dispatcher = async (d: Database) => {
      let batches = 0;
      while (accepted() < 400 && Date.now() < deadline) {
        running += 1;
        if (running > 1) overlapped += 1;
        batches += (await runDelivery(d, config, { deadline }).finally(() => (running -= 1))).batches;
        await sleep(2);
      }
      return batches;
    };
    const [a, b] = await Promise.all([dispatcher(db()), dispatcher(other)]);
    expect(a + b).toBe(r.arrivals.length);
    expect(a + b).toBeGreaterThan(0);
    // The runs overlapped (on the real server each has its own connections). Which of the two gets
    // the batches is a race: one run can claim all 16 partitions while the other finds none free.
    if (db().url) expect(overlapped).toBeGreaterThan(0);
    expect(r.badSignatures).toEqual([]);

    const byPartition = new Map<string, Arrival[]>();
    for (const arrival of r.arrivals) {
      expect(arrival.headers['queen-subscription']).toBe(sub.id);
      const list = byPartition.get(arrival.body.partition) ?? [];
      list.push(arrival);
      byPartition.set(arrival.body.partition, list);
    }
    expect([...byPartition.keys()].sort()).toEqual([...partitions].sort());
    for (const [partition, list] of byPartition) {
      let next = 0;
      let previous: Arrival | undefined;
      for (const arrival of list) {
        const offsets = arrival.body.messages.map((m) => m.offset);
        // No overlap: a batch of this partition arrives only after the previous one was answered.
        if (previous) expect(arrival.at, partition).toBeGreaterThanOrEqual(previous.answeredAt);
        if (previous && previous.headers['webhook-id'] === arrival.headers['webhook-id']) {
          expect(offsets).toEqual(previous.body.messages.map((m) => m.offset));
        }
        expect(offsets[0], partition).toBe(next);
        expect(offsets).toEqual(offsets.map((_, i) => next + i));
        if (arrival.status === 200) next = offsets.at(-1)! + 1;
        previous = arrival;
      }
      expect(next, partition).toBe(25);
    }
    const [committed] = await db().query<{ n: string }>(
      `SELECT count(*) AS n FROM queen.log_consumers WHERE consumer_group = 'o' AND committed = 24`,
    );
    expect(committed!.n).toBe('16');
    await r.close();
  });
});
