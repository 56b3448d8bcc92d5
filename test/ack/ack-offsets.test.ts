// Acks that carry the offsets pop returned (docs/semantics.md#acks): the offsets of one call are
// checked against the sidecar in one read of the range they span, whatever order, repetition or
// mix with transactionId-only items the call has; each item must still name its own message.
import { describe, expect, it } from 'vitest';
import { offsets, type PopBody, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db);

// Ten messages in segments of 1, 3, 1, 4 and 1 (the range read crosses rows of every size), popped.
async function popTen(queue: string): Promise<PopBody> {
  let start = 0;
  for (const n of [1, 3, 1, 4, 1]) {
    await b.pushNumbered(queue, 'p', n, undefined, start);
    start += n;
  }
  const { body } = await b.pop(`queue/${queue}/partition/p?batch=10`);
  expect(offsets(body)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  return body;
}

const byOffset = (body: PopBody, offset: number, extra: object = {}) => {
  const m = body.messages.find((x) => x.offset === offset)!;
  return { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status: 'completed', offset, ...extra };
};
const committed = async (queue: string) => Number((await cursor(db(), queue, 'p')).committed);

describe('acks by offset', () => {
  it('accept a whole batch out of order and with repeats, each item at its own offset', async () => {
    const body = await popTen('off-shuffled');
    const order = [9, 3, 0, 7, 3, 5, 1, 8, 2, 6, 4, 0];
    const res = await b.ackBatch(order.map((o) => byOffset(body, o)));
    expect(res.body.map((r) => [r.success, r.offset])).toEqual(order.map((o) => [true, o]));
    expect(await committed('off-shuffled')).toBe(9);
  });

  it('refuse an item whose transactionId is not the one at its offset, wherever it sits in the range', async () => {
    const body = await popTen('off-wrong');
    const wrongAt = [0, 4, 9];
    const items = body.messages.map((m) =>
      wrongAt.includes(m.offset) ? byOffset(body, m.offset, { transactionId: `not-${m.transactionId}` }) : byOffset(body, m.offset),
    );
    const res = await b.ackBatch(items);
    expect(res.body.map((r) => r.success)).toEqual(body.messages.map((m) => !wrongAt.includes(m.offset)));
    for (const o of wrongAt) expect(res.body[o]!.error).toMatch(/^Message not found: /);
    // An ack is an offset commit: the highest completed offset (8) commits everything before it.
    expect(await committed('off-wrong')).toBe(8);
  });

  it('refuse an offset past the lease, and one carrying another message of the batch', async () => {
    const body = await popTen('off-swapped');
    const res = await b.ackBatch([
      byOffset(body, 1),
      byOffset(body, 2, { offset: 3 }),
      byOffset(body, 4, { offset: 10 }),
      byOffset(body, 5),
    ]);
    expect(res.body.map((r) => r.success)).toEqual([true, false, false, true]);
    expect(await committed('off-swapped')).toBe(5);
  });

  it('mix with transactionId-only items in one call', async () => {
    const body = await popTen('off-mixed');
    const items = body.messages.map((m) =>
      m.offset % 2 === 0 ? byOffset(body, m.offset) : { ...byOffset(body, m.offset), offset: undefined },
    );
    const res = await b.ackBatch(items.slice(0, 6));
    expect(res.body.map((r) => [r.success, r.offset])).toEqual([0, 1, 2, 3, 4, 5].map((o) => [true, o]));
    expect(await committed('off-mixed')).toBe(5);
    // Below the cursor an offset is the no-op success, whatever the rest of the call holds.
    const again = await b.ackBatch([byOffset(body, 2), items[6]!, byOffset(body, 3), byOffset(body, 9)]);
    expect(again.body.map((r) => [r.success, r.offset, r.alreadyCommitted ?? false])).toEqual([
      [true, 2, true],
      [true, 6, false],
      [true, 3, true],
      [true, 9, false],
    ]);
    expect(await committed('off-mixed')).toBe(9);
  });

  it('check offsets far apart one by one, with the same answers', async () => {
    const body = await popTen('off-sparse');
    const first = await b.ackBatch([byOffset(body, 0), byOffset(body, 9, { transactionId: 'p-8' })]);
    expect(first.body.map((r) => r.success)).toEqual([true, false]);
    expect(await committed('off-sparse')).toBe(0);
    const second = await b.ackBatch([byOffset(body, 1), byOffset(body, 9)]);
    expect(second.body.map((r) => [r.success, r.offset])).toEqual([
      [true, 1],
      [true, 9],
    ]);
    expect(await committed('off-sparse')).toBe(9);
  });

  it('accept offsets whose sidecar rows were purged, beside offsets still checked', async () => {
    const body = await popTen('off-purged');
    // What the retention loop does to the sidecar past its window: the rows below 4 go, txns_start moves.
    await db().query(
      `WITH p AS (SELECT lp.id FROM queen.log_partitions lp JOIN queen.queues q ON q.id = lp.queue_id WHERE q.name = 'off-purged'),
            d AS (DELETE FROM queen.log_txns t USING p WHERE t.partition_id = p.id AND t.end_offset < 4)
       UPDATE queen.log_partitions lp SET txns_start = 4 FROM p WHERE lp.id = p.id`,
    );
    const res = await b.ackBatch([
      byOffset(body, 2),
      byOffset(body, 3),
      byOffset(body, 4),
      byOffset(body, 5, { transactionId: 'p-6' }),
      byOffset(body, 6),
    ]);
    expect(res.body.map((r) => r.success)).toEqual([true, true, true, false, true]);
    expect(await committed('off-purged')).toBe(6);
  });
});
