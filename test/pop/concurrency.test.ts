// Real PostgreSQL only: several consumers racing through one pool (PGlite is one connection).
import { describe, expect, it } from 'vitest';
import { testClient, type PopBody } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { configureQueue } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(testMode() !== 'pg')('concurrent consumers on the real server', () => {
  const db = useDatabase({ max: 24 });
  const b = testClient(db);

  /** Runs `consumers` loops popping `path` and acking everything until `total` messages arrived. */
  async function consume(path: string, consumers: number, total: number, group?: string, onBatch?: (body: PopBody) => Promise<void>) {
    const got: { partition: string; offset: number; n: unknown }[] = [];
    const deadline = Date.now() + 60_000;
    await Promise.all(
      Array.from({ length: consumers }, async () => {
        while (got.length < total && Date.now() < deadline) {
          const { status, body } = await b.pop(path);
          if (status === 204) {
            await sleep(5);
            continue;
          }
          for (const m of body.messages) got.push({ partition: m.partition, offset: m.offset, n: m.data });
          if (onBatch) await onBatch(body);
          const acks = await b.ackAll(body, 'completed', group);
          expect(acks.body.every((a) => a.success)).toBe(true);
        }
      }),
    );
    return got;
  }

  it('lets only one of four consumers of a group hold the lease on a single partition at a time', async () => {
    await b.pushNumbered('solo', 'only', 40);
    let holders = 0;
    let overlap = false;
    const got = await consume('queue/solo?batch=5', 4, 40, undefined, async () => {
      if (holders > 0) overlap = true;
      holders++;
      await sleep(10);
      holders--;
    });
    expect(overlap).toBe(false);
    expect(got.map((g) => g.offset)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('delivers 10,000 messages over 100 partitions to eight consumers exactly once and in order per partition', async () => {
    const producing = (async () => {
      for (let round = 0; round < 4; round++) {
        await Promise.all(Array.from({ length: 100 }, (_, p) => b.pushNumbered('wide', `p${p}`, 25, (i) => `p${p}-${i}`, round * 25)));
      }
    })();
    const got = await consume('queue/wide?batch=50', 8, 10_000);
    await producing;
    expect(got).toHaveLength(10_000);
    const perPartition = new Map<string, number[]>();
    for (const g of got) perPartition.set(g.partition, [...(perPartition.get(g.partition) ?? []), g.offset]);
    expect(perPartition.size).toBe(100);
    for (const seq of perPartition.values()) expect(seq).toEqual(Array.from({ length: 100 }, (_, i) => i));
  }, 120_000);

  it('gives two groups each every message', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, p) => b.pushNumbered('fan', `p${p}`, 50)));
    const [one, two] = await Promise.all([
      consume('queue/fan?batch=20&consumerGroup=one', 4, 1000, 'one'),
      consume('queue/fan?batch=20&consumerGroup=two', 4, 1000, 'two'),
    ]);
    for (const got of [one, two]) {
      expect(got).toHaveLength(1000);
      expect(new Set(got.map((g) => `${g.partition}:${g.offset}`)).size).toBe(1000);
    }
  }, 60_000);

  it("gives a dead consumer's batch to another consumer once its lease expires", async () => {
    await b.pushNumbered('crash', 'p', 3);
    await configureQueue(db(), 'crash', 'lease_time = 1');
    const dead = await b.pop('queue/crash?batch=3');
    expect(dead.body.messages).toHaveLength(3);
    expect((await b.pop('queue/crash?batch=3')).status).toBe(204);
    await sleep(1200);
    const rescued = await b.pop('queue/crash?batch=3');
    expect(rescued.body.messages.map((m) => [m.offset, m.attempt])).toEqual([
      [0, 2],
      [1, 2],
      [2, 2],
    ]);
    const late = await b.ackAll(dead.body);
    expect(late.body.every((a) => a.error?.startsWith('Invalid or expired lease: '))).toBe(true);
    expect((await b.ackAll(rescued.body)).body.every((a) => a.success)).toBe(true);
  });
});
