// A nack inside a batch (docs/semantics.md#the-clamp): a DLQ move or a failed/retry clamp releases
// the lease in the same statement, so the rest of the batch is deliverable at once (or after
// retryDelay), and `attempt` counts redeliveries of the batch's first message.
import { describe, expect, it } from 'vitest';
import { offsets, type PopBody, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor, expireLeases } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db);

const item = (body: PopBody, offset: number, status: string) => {
  const m = body.messages.find((x) => x.offset === offset)!;
  return { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status, error: `nack ${offset}` };
};

/** Acks every message of the batch completed except `signals` (offset -> status). */
const nack = (body: PopBody, signals: Record<number, string>) =>
  b.ackBatch(body.messages.map((m) => item(body, m.offset, signals[m.offset] ?? 'completed')));

const dlqOffsets = async (queue: string) =>
  (
    await db().query<{ o: string }>(
      `SELECT d.msg_offset AS o FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id
       JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 ORDER BY d.msg_offset`,
      [queue],
    )
  ).map((r) => Number(r.o));

/** A configured queue (leaseTime 300 s, as Queen's client creates it) with ten messages popped in one batch. */
async function popTen(queue: string, options: Record<string, unknown>) {
  expect((await b.configure(queue, { leaseTime: 300, ...options })).status).toBe(200);
  await b.pushNumbered(queue, 'p', 10);
  const { body } = await b.popQueue(queue, { batch: 10 }, 'p');
  expect(offsets(body)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  return body as PopBody;
}

describe('a batch nack that dead-letters one message', () => {
  it('moves it to the DLQ, releases the lease, and the next pop gets the rest at once', async () => {
    const body = await popTen('dlq-failed', { retryLimit: 0 });
    const res = await nack(body, { 3: 'failed' });
    expect(res.body.every((r) => r.success && r.leaseReleased)).toBe(true);
    expect(res.body[3]).toMatchObject({ dlq: true, committed: true, offset: 3 });
    expect(res.body.slice(4).every((r) => r.committed === false)).toBe(true);
    const c = await cursor(db(), 'dlq-failed', 'p');
    expect([Number(c.committed), c.batch_end, c.worker_id]).toEqual([3, null, null]);
    expect(await dlqOffsets('dlq-failed')).toEqual([3]);
    const again = await b.popQueue('dlq-failed', { batch: 10 });
    expect(offsets(again.body)).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it('does the same for an explicit status "dlq", whatever the retry budget', async () => {
    const body = await popTen('dlq-explicit', { retryLimit: 5 });
    await nack(body, { 6: 'dlq' });
    expect(await dlqOffsets('dlq-explicit')).toEqual([6]);
    expect(Number((await cursor(db(), 'dlq-explicit', 'p')).committed)).toBe(6);
    expect(offsets((await b.popQueue('dlq-explicit', { batch: 10 }, 'p')).body)).toEqual([7, 8, 9]);
  });

  it('delivers the rest at once when the dead-lettered message was the last but one acked', async () => {
    const body = await popTen('dlq-single', { retryLimit: 0 });
    await b.ackBatch([item(body, 0, 'completed'), item(body, 1, 'failed')]);
    expect(offsets((await b.popQueue('dlq-single', { batch: 10 })).body)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('a batch nack inside the retry budget', () => {
  it('redelivers from the failed message at once when the queue has no retryDelay', async () => {
    const body = await popTen('failed-now', { retryLimit: 2 });
    await nack(body, { 5: 'failed' });
    expect(Number((await cursor(db(), 'failed-now', 'p')).committed)).toBe(4);
    expect(offsets((await b.popQueue('failed-now', { batch: 10 }, 'p')).body)).toEqual([5, 6, 7, 8, 9]);
  });

  it('keeps the rest of the batch from the group for retryDelay, then redelivers from the failed message', async () => {
    const body = await popTen('failed-later', { retryLimit: 2, retryDelay: 3_600_000 });
    const res = await nack(body, { 2: 'failed' });
    expect(res.body.every((r) => r.leaseReleased)).toBe(true);
    const c = await cursor(db(), 'failed-later', 'p');
    expect([Number(c.committed), c.batch_end]).toEqual([1, null]);
    expect(new Date(c.retry_not_before).getTime()).toBeGreaterThan(Date.now() + 3_000_000);
    expect((await b.popQueue('failed-later', { batch: 10 })).status).toBe(204);
    expect((await b.popQueue('failed-later', { batch: 10 }, 'p')).status).toBe(204);
    await db().query(`UPDATE queen.log_consumers SET retry_not_before = now() - interval '1 second' WHERE partition_id = $1`, [
      body.partitionId,
    ]);
    expect(offsets((await b.popQueue('failed-later', { batch: 10 })).body)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('redelivers from a retried message at once, without retryDelay or charging the budget', async () => {
    const body = await popTen('retry-now', { retryLimit: 2, retryDelay: 3_600_000 });
    await nack(body, { 7: 'retry' });
    expect((await cursor(db(), 'retry-now', 'p')).batch_retry_count).toBe(0);
    expect(offsets((await b.popQueue('retry-now', { batch: 10 })).body)).toEqual([7, 8, 9]);
  });
});

describe('attempt', () => {
  const attempts = (body: PopBody | null) => (body?.messages ?? []).map((m) => m.attempt);

  it('counts each delivery of the message a batch starts at, after a nack inside the batch too', async () => {
    const body = await popTen('attempt-nack', { retryLimit: 5 });
    expect(attempts(body)[0]).toBe(1);
    await nack(body, { 3: 'failed' });
    const second = (await b.popQueue('attempt-nack', { batch: 10 }, 'p')).body as PopBody;
    expect([second.messages[0]!.offset, second.messages[0]!.attempt]).toEqual([3, 2]);
    await b.ackBatch([item(second, 3, 'failed')]);
    const third = (await b.popQueue('attempt-nack', { batch: 10 }, 'p')).body as PopBody;
    expect([third.messages[0]!.offset, third.messages[0]!.attempt]).toEqual([3, 3]);
    await b.ackBatch([item(third, 3, 'retry')]);
    const fourth = (await b.popQueue('attempt-nack', { batch: 10 }, 'p')).body as PopBody;
    expect([fourth.messages[0]!.offset, fourth.messages[0]!.attempt]).toEqual([3, 4]);
    await b.ackAll(fourth);
    await b.pushNumbered('attempt-nack', 'p', 1, undefined, 10);
    expect(attempts((await b.popQueue('attempt-nack', { batch: 10 }, 'p')).body)).toEqual([1]);
  });

  it('counts a redelivery after a lease expiry from the first message still unacked', async () => {
    const body = await popTen('attempt-expiry', {});
    await b.ackBatch([item(body, 0, 'completed'), item(body, 1, 'completed')]);
    await expireLeases(db(), 'attempt-expiry');
    const again = (await b.popQueue('attempt-expiry', { batch: 10 }, 'p')).body as PopBody;
    expect([again.messages[0]!.offset, again.messages[0]!.attempt]).toEqual([2, 2]);
    await expireLeases(db(), 'attempt-expiry');
    expect(attempts((await b.popQueue('attempt-expiry', { batch: 1 }, 'p')).body)).toEqual([3]);
  });

  it('counts the messages after a dead-lettered one as redelivered', async () => {
    const body = await popTen('attempt-dlq', { retryLimit: 0 });
    await nack(body, { 4: 'failed' });
    const again = (await b.popQueue('attempt-dlq', { batch: 10 }, 'p')).body as PopBody;
    expect([again.messages[0]!.offset, again.messages[0]!.attempt]).toEqual([5, 2]);
  });

  it('starts again at 1 for a batch that begins after everything delivered before', async () => {
    await b.pushNumbered('attempt-fresh', 'p', 4);
    const first = (await b.popQueue('attempt-fresh', { batch: 2 }, 'p')).body as PopBody;
    await b.ackAll(first);
    expect(attempts((await b.popQueue('attempt-fresh', { batch: 2 }, 'p')).body)).toEqual([1, 1]);
  });
});
