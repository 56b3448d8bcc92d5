// A retried ack (docs/semantics.md#retried-acks): an ack of an offset at or below the cursor is a
// no-op success whatever its leaseId, so a client whose answer was lost hears success for work
// already committed.
import { describe, expect, it } from 'vitest';
import { observe, type StatementLog } from '../../lib/db/client.js';
import { offsets, type PopBody, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor, expireLeases } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db);

const acksOf = (body: PopBody, status = 'completed') =>
  body.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status }));

async function popBatch(queue: string, count: number, batch = count) {
  await b.pushNumbered(queue, 'p', count);
  const { body } = await b.popQueue(queue, { batch }, 'p');
  return body as PopBody;
}

const committed = async (queue: string) => Number((await cursor(db(), queue, 'p')).committed);

describe('a retried ack', () => {
  it('with the same leaseId, after the commit released the lease, is success and says it was already committed', async () => {
    const body = await popBatch('same-lease', 5);
    const first = await b.ackBatch(acksOf(body));
    expect(first.body.every((r) => r.success && r.leaseReleased && r.alreadyCommitted === undefined)).toBe(true);
    const retry = await b.ackBatch(acksOf(body));
    expect(retry.body.map((r) => [r.success, r.error, r.committed, r.alreadyCommitted, r.offset])).toEqual(
      [0, 1, 2, 3, 4].map((o) => [true, null, true, true, o]),
    );
    expect(retry.body.every((r) => !r.leaseReleased && !r.dlq)).toBe(true);
    expect(await committed('same-lease')).toBe(4);
  });

  it('while the rest of its batch is still leased, is success and leaves the lease alone', async () => {
    const body = await popBatch('partial-retry', 5);
    const [, second] = acksOf(body);
    await b.ack(second!);
    const retry = await b.ack(second!);
    expect(retry.body[0]).toMatchObject({ success: true, committed: true, alreadyCommitted: true, offset: 1, leaseReleased: false });
    const c = await cursor(db(), 'partial-retry', 'p');
    expect([Number(c.committed), Number(c.batch_end), c.worker_id]).toEqual([1, 4, body.leaseId]);
  });

  it('after its lease expired and another worker took the next batch, is still success and does not touch that lease', async () => {
    const body = await popBatch('taken-over', 6, 3);
    const first = acksOf(body).slice(0, 2);
    await b.ackBatch(first);
    await expireLeases(db(), 'taken-over');
    const next = (await b.popQueue('taken-over', { batch: 3 }, 'p')).body as PopBody;
    expect(offsets(next)).toEqual([2, 3, 4]);
    const retry = await b.ackBatch(first);
    expect(retry.body.map((r) => [r.success, r.alreadyCommitted, r.offset])).toEqual([
      [true, true, 0],
      [true, true, 1],
    ]);
    // Offset 2 was not committed by the old worker: its late ack is refused, as before.
    const late = await b.ackBatch(acksOf(body).slice(2));
    expect(late.body[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Invalid or expired lease: .*pop again/) });
    const c = await cursor(db(), 'taken-over', 'p');
    expect([Number(c.committed), Number(c.batch_end), c.worker_id]).toEqual([1, 4, next.leaseId]);
    expect((await b.ackBatch(acksOf(next))).body.every((r) => r.success && r.committed)).toBe(true);
    expect(await committed('taken-over')).toBe(4);
  });

  it('is found by transactionId however far the cursor has moved since, in one statement', async () => {
    const body = await popBatch('far-behind', 200, 100);
    await b.ackBatch(acksOf(body));
    for (let start = 200; start < 2_000; start += 200) await b.pushNumbered('far-behind', 'p', 200, undefined, start);
    let more = (await b.popQueue('far-behind', { batch: 2_000 }, 'p')).body as PopBody;
    expect(more.messages).toHaveLength(1_900);
    await b.ackBatch(acksOf(more));
    const log: StatementLog = { statements: [] };
    const retry = await testClient(observe(db(), log)).ackBatch(acksOf(body));
    expect(log.statements).toHaveLength(1);
    expect(retry.body.map((r) => r.offset)).toEqual(body.messages.map((m) => m.offset));
    expect(retry.body.every((r) => r.success && r.alreadyCommitted)).toBe(true);
    more = (await b.popQueue('far-behind', { batch: 10 }, 'p')).body as PopBody;
    expect(more).toBeNull();
    expect(await committed('far-behind')).toBe(1_999);
  });

  it('without a leaseId while another worker holds the lease, is success for an offset already committed', async () => {
    const body = await popBatch('leaseless-retry', 4, 2);
    await b.ackBatch(acksOf(body));
    const holder = (await b.popQueue('leaseless-retry', { batch: 2 }, 'p')).body as PopBody;
    const [m] = body.messages;
    const res = await b.ack({ transactionId: m!.transactionId, partitionId: m!.partitionId, status: 'completed' });
    expect(res.body[0]).toMatchObject({ success: true, alreadyCommitted: true, offset: 0 });
    const [h] = holder.messages;
    const refused = await b.ack({ transactionId: h!.transactionId, partitionId: h!.partitionId, status: 'completed' });
    expect(refused.body[0]!.success).toBe(false);
  });

  it('of a dead-lettered message writes no second DLQ row and charges nothing', async () => {
    const body = await popBatch('dlq-retry', 3);
    const nack = [{ ...acksOf(body)[1]!, status: 'dlq', error: 'poison' }];
    expect((await b.ackBatch(nack)).body[0]).toMatchObject({ dlq: true, committed: true });
    const retry = await b.ackBatch(nack);
    expect(retry.body[0]).toMatchObject({ success: true, alreadyCommitted: true, dlq: false, offset: 1 });
    const rows = await db().query(`SELECT 1 FROM queen.log_dlq WHERE partition_id = $1`, [body.partitionId]);
    expect(rows).toHaveLength(1);
    expect((await cursor(db(), 'dlq-retry', 'p')).batch_retry_count).toBe(0);
  });

  it('answers "Message not found" for an id whose sidecar hash was purged and that is not in the leased range', async () => {
    const body = await popBatch('purged-old', 4, 2);
    await b.ackBatch(acksOf(body));
    await db().query(`DELETE FROM queen.log_txns WHERE partition_id = $1`, [body.partitionId]);
    await db().query(`UPDATE queen.log_partitions SET txns_start = 4 WHERE id = $1`, [body.partitionId]);
    const leaseless = await b.ackBatch(acksOf(body).map((a) => ({ ...a, leaseId: '' })));
    expect(leaseless.body.map((r) => [r.success, r.error])).toEqual([
      [false, expect.stringMatching(/^Message not found: /)],
      [false, expect.stringMatching(/^Message not found: /)],
    ]);
    // With its old lease nothing proves the id was committed: the lease check answers, as before.
    const stale = await b.ackBatch(acksOf(body));
    expect(stale.body.map((r) => r.error)).toEqual([
      expect.stringMatching(/^Invalid or expired lease: /),
      expect.stringMatching(/^Invalid or expired lease: /),
    ]);
    // An echoed offset needs no hash: at or below the cursor it is still the no-op success.
    const byOffset = await b.ack({ ...acksOf(body)[0]!, offset: 0 });
    expect(byOffset.body[0]).toMatchObject({ success: true, alreadyCommitted: true, offset: 0 });
  });
});
