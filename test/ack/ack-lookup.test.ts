// Resolving transactionId -> offset at scale: a whole 10,000-message batch in one call, and
// repeated transactionIds resolving to the lowest offset inside the allowed range whichever way
// queen.ack searches (exploding the range, position() for a few ids, the GIN index for many ids in
// a long range).
import { beforeAll, describe, expect, it } from 'vitest';
import { observe, type StatementLog } from '../../lib/db/client.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { configureQueue, cursor } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db);

const committed = async (queue: string) => Number((await cursor(db(), queue, 'p')).committed);

describe('acking a large batch by transactionId', () => {
  it('acks a 10,000-message batch in one call: every item succeeds at its own offset and the cursor lands at the end', async () => {
    for (let start = 0; start < 10_000; start += 100) await b.pushNumbered('big', 'p', 100, undefined, start);
    const { body } = await b.pop('queue/big/partition/p?batch=10000');
    expect(body.messages).toHaveLength(10_000);
    const log: StatementLog = { statements: [] };
    const res = await testClient(observe(db(), log)).ackAll(body);
    expect(log.statements).toHaveLength(1);
    expect(res.body).toHaveLength(10_000);
    expect(res.body.filter((r) => !r.success)).toEqual([]);
    expect(res.body.map((r) => r.offset)).toEqual(body.messages.map((m) => m.offset));
    expect(res.body.every((r) => r.committed && r.leaseReleased)).toBe(true);
    const c = await cursor(db(), 'big', 'p');
    expect([Number(c.committed), c.batch_end, c.worker_id]).toEqual([9_999, null, null]);
  });
});

describe('repeated transactionIds across segments', () => {
  // Four segments of 500 with the same ids: id-k sits at offsets k, 500 + k, 1000 + k, 1500 + k.
  beforeAll(async () => {
    const id = (i: number) => `id-${i % 500}`;
    await b.pushNumbered('rep', 'p', 500, id);
    await configureQueue(db(), 'rep', 'dedup_window_seconds = 0');
    for (const start of [500, 1000, 1500]) await b.pushNumbered('rep', 'p', 500, id, start);
  });
  const acks = (ids: number[], leaseId: string | null = null) =>
    b.ackBatch(ids.map((i) => ({ transactionId: `id-${i}`, partitionId: partitionId(), leaseId, status: 'completed' })));
  let pid = '';
  const partitionId = () => pid;

  it('resolve to the lowest offset after the cursor, however many ids one call carries', async () => {
    pid = String(
      (
        await db().query<{ id: string }>(
          `SELECT id FROM queen.log_partitions WHERE name = 'p' AND queue_id = (SELECT id FROM queen.queues WHERE name = 'rep')`,
        )
      )[0]!.id,
    );
    const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
    // 20 ids, no lease, range (−1, 1999]: the GIN index path.
    const many = await acks(range(100, 20));
    expect(many.body.map((r) => r.offset)).toEqual(range(100, 20));
    expect(await committed('rep')).toBe(119);
    // 5 ids: position() over the sidecar rows; offsets 100..104 are at or below the cursor now.
    const few = await acks(range(100, 5));
    expect(few.body.map((r) => r.offset)).toEqual(range(600, 5));
    expect(await committed('rep')).toBe(604);
    // All 500 ids: the range is exploded once; ids below 105 already passed twice.
    const all = await acks(range(0, 500));
    expect(all.body.every((r) => r.success)).toBe(true);
    expect(all.body.map((r) => r.offset)).toEqual(range(0, 500).map((i) => (i < 105 ? 1000 + i : 500 + i)));
    expect(await committed('rep')).toBe(1104);
  });

  it('never resolve past the end of the lease, even when the id repeats further on', async () => {
    const { body } = await b.pop('queue/rep/partition/p?batch=100');
    expect([body.messages[0]!.offset, body.messages.at(-1)!.offset]).toEqual([1105, 1204]);
    // id-0 is at 1000 (consumed: a retried ack, the no-op success) and 1500 (after the lease);
    // id-200 at 1200 (leased).
    const res = await acks([0, 200], body.leaseId);
    expect(res.body.map((r) => [r.success, r.offset, r.alreadyCommitted ?? false])).toEqual([
      [true, 1000, true],
      [true, 1200, false],
    ]);
    expect(await committed('rep')).toBe(1200);
  });
});
