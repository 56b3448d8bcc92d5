// POST /api/v1/transaction exactly as Queen's JS and Python transaction builders send it
// (TransactionBuilder.js, transaction_builder.py): one ack operation per message with no leaseId,
// the leases listed once in `requiredLeases`, push items without transactionIds
// (docs/semantics.md#transactions).
import { describe, expect, it } from 'vitest';
import { observe, type StatementLog } from '../../lib/db/client.js';
import { type PopBody, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor, expireLeases } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db);

/** The builders' body for `.ack(messages, status, {consumerGroup}).queue(out).partition(p).push(items).commit()`. */
function clientBody(
  messages: PopBody['messages'],
  out: { queue: string; partition?: string; payloads: unknown[] },
  status = 'completed',
  consumerGroup?: string,
) {
  return {
    operations: [
      ...messages.map((m) => ({
        type: 'ack',
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        status,
        ...(consumerGroup ? { consumerGroup } : {}),
      })),
      {
        type: 'push',
        items: out.payloads.map((payload) => ({ queue: out.queue, payload, ...(out.partition ? { partition: out.partition } : {}) })),
      },
    ],
    requiredLeases: [...new Set(messages.map((m) => m.leaseId).filter(Boolean))],
  };
}

const pushedCount = async (queue: string) =>
  Number(
    (
      await db().query<{ n: string }>(
        `SELECT coalesce(sum(s.end_offset - s.base_offset + 1), 0) AS n FROM queen.log_segments s
       JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1`,
        [queue],
      )
    )[0]!.n,
  );

describe("a transaction as Queen's clients send it", () => {
  it('acks and pushes for the worker holding the lease, answering one flat result per ack and per pushed item', async () => {
    await b.pushNumbered('orders', 'cust-42', 2);
    const { body } = await b.popQueue('orders', { batch: 2, consumerGroup: 'billing' }, 'cust-42');
    const res = await b.call(
      'POST',
      '/api/v1/transaction',
      clientBody(
        body.messages,
        { queue: 'billing.invoices', partition: 'cust-42', payloads: [{ invoice: 1 }, { invoice: 2 }] },
        'completed',
        'billing',
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.results).toHaveLength(4);
    expect(res.body.results.map((r: any) => [r.index, r.type, r.success])).toEqual([
      [0, 'ack', true],
      [1, 'ack', true],
      [2, 'push', true],
      [3, 'push', true],
    ]);
    expect(res.body.results[1]).toMatchObject({
      transactionId: 'cust-42-1',
      error: null,
      dlq: false,
      committed: true,
      leaseReleased: true,
      offset: 1,
    });
    const pushed = res.body.results[2];
    expect(pushed).toMatchObject({ queueName: 'billing.invoices', status: 'queued', offset: 0 });
    expect([pushed.transactionId, pushed.messageId, pushed.partitionId]).toEqual([
      pushed.transaction_id,
      pushed.message_id,
      pushed.partition_id,
    ]);
    expect(Number((await cursor(db(), 'orders', 'cust-42', 'billing')).committed)).toBe(1);
    const out = await b.popQueue('billing.invoices', { batch: 5 }, 'cust-42');
    expect(out.body.messages.map((m: any) => m.data)).toEqual([{ invoice: 1 }, { invoice: 2 }]);
  });

  it('acks messages of several partitions, each authorised by its own lease in requiredLeases', async () => {
    for (const p of ['a', 'b']) await b.pushNumbered('multi', p, 1);
    const first = (await b.popQueue('multi', { batch: 1 }, 'a')).body as PopBody;
    const second = (await b.popQueue('multi', { batch: 1 }, 'b')).body as PopBody;
    const res = await b.call(
      'POST',
      '/api/v1/transaction',
      clientBody([...first.messages, ...second.messages], { queue: 'multi-out', payloads: [1] }, 'completed'),
    );
    expect(res.body.success).toBe(true);
    expect(Number((await cursor(db(), 'multi', 'a')).committed)).toBe(0);
    expect(Number((await cursor(db(), 'multi', 'b')).committed)).toBe(0);
  });

  it('acks a batch message by message in one statement, and never passes a message nacked before the rest', async () => {
    await b.pushNumbered('per-message', 'p', 4);
    const { body } = await b.popQueue('per-message', { batch: 4 }, 'p');
    const req = clientBody(body.messages, { queue: 'per-message-out', payloads: [1] });
    req.operations[1] = { ...req.operations[1]!, status: 'failed' } as (typeof req.operations)[number];
    const log: StatementLog = { statements: [] };
    const res = await testClient(observe(db(), log)).call('POST', '/api/v1/transaction', req);
    expect(res.body.success).toBe(true);
    expect(log.statements.filter((q) => q.includes('queen.ack'))).toHaveLength(1);
    expect(res.body.results.slice(0, 4).map((r: any) => r.committed)).toEqual([true, false, false, false]);
    expect(Number((await cursor(db(), 'per-message', 'p')).committed)).toBe(0);
    expect((await b.popQueue('per-message', { batch: 4 }, 'p')).body.messages.map((m: any) => m.offset)).toEqual([1, 2, 3]);
  });

  it('is refused while another worker holds the lease, and writes nothing', async () => {
    await b.pushNumbered('held', 'p', 1);
    const { body } = await b.popQueue('held', {}, 'p');
    const req = clientBody(body.messages, { queue: 'held-out', payloads: [{ x: 1 }] });
    req.requiredLeases = ['0193a0f0-0000-7000-8000-00000000beef'];
    const res = await b.call('POST', '/api/v1/transaction', req);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/Another consumer holds the lease/);
    expect(res.body.results).toEqual([expect.objectContaining({ index: 0, type: 'ack', success: false })]);
    expect(await pushedCount('held-out')).toBe(0);
    expect(Number((await cursor(db(), 'held', 'p')).committed)).toBe(-1);
  });

  it('acks without a lease check once no lease is live on the partition', async () => {
    await b.pushNumbered('expired', 'p', 1);
    const { body } = await b.popQueue('expired', {}, 'p');
    await expireLeases(db(), 'expired');
    const res = await b.call('POST', '/api/v1/transaction', clientBody(body.messages, { queue: 'expired-out', payloads: [1] }, 'failed'));
    expect(res.body.success).toBe(true);
    expect(res.body.results[0]).toMatchObject({ type: 'ack', success: true, leaseReleased: true });
    expect((await cursor(db(), 'expired', 'p')).batch_retry_count).toBe(1);
  });

  it('is all or nothing: a failing ack after a push rolls the push back', async () => {
    await b.pushNumbered('rollback', 'p', 1);
    const { body } = await b.popQueue('rollback', {}, 'p');
    const req = clientBody(body.messages, { queue: 'rollback-out', payloads: [1] });
    req.operations.reverse();
    req.operations.push({ type: 'ack', transactionId: 'never-pushed', partitionId: body.partitionId, status: 'completed' });
    const res = await b.call('POST', '/api/v1/transaction', req);
    expect(res.body).toMatchObject({ success: false });
    expect(res.body.error).toMatch(/never-pushed.*Message not found/);
    expect(res.body.results.map((r: any) => [r.index, r.type, r.success])).toEqual([
      [0, 'push', true],
      [1, 'ack', true],
      [2, 'ack', false],
    ]);
    expect(await pushedCount('rollback-out')).toBe(0);
    expect(Number((await cursor(db(), 'rollback', 'p')).committed)).toBe(-1);
  });
});
