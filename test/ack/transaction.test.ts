import { describe, expect, it } from 'vitest';
import { offsets, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db, { config: { encryptionKey: 'cd'.repeat(32) } });

const segments = async (queue: string) =>
  Number(
    (
      await db().query<{ n: string }>(
        `SELECT count(*) AS n FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1`,
        [queue],
      )
    )[0]!.n,
  );

describe('POST /api/v1/transaction', () => {
  it('acks and pushes in one transaction, in order, keeping pushed payload text verbatim', async () => {
    await b.pushNumbered('stage1', 'p', 1);
    const { body } = await b.pop('queue/stage1');
    const m = body.messages[0]!;
    const res = await b.call(
      'POST',
      '/api/v1/transaction',
      `{"operations":[{"type":"ack","transactionId":"${m.transactionId}","partitionId":"${m.partitionId}","leaseId":"${body.leaseId}","status":"completed"},` +
        `{"type":"push","items":[{"queue":"stage2","payload":{"n":1.50}}]}]}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      results: [
        { index: 0, type: 'ack', success: true, committed: true },
        { index: 1, type: 'push', success: true, status: 'queued', queueName: 'stage2' },
      ],
    });
    expect(res.body.transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number((await cursor(db(), 'stage1', 'p')).committed)).toBe(0);
    expect((await b.call('GET', '/api/v1/pop/queue/stage2')).text).toContain('"data":{"n":1.50}');
  });

  it('writes nothing when an ack in it fails, and says why', async () => {
    await b.pushNumbered('atomic', 'p', 1);
    const { body } = await b.pop('queue/atomic');
    const m = body.messages[0]!;
    const res = await b.call('POST', '/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'atomic-out', payload: 1 }] },
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, leaseId: 'not-my-lease', status: 'completed' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/Invalid or expired lease/);
    expect(await segments('atomic-out')).toBe(0);
    expect(Number((await cursor(db(), 'atomic', 'p')).committed)).toBe(-1);
  });

  it('answers 400 for a body that is not a transaction and writes nothing', async () => {
    expect(
      (await b.call('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [] }], requiredLeases: 'lease' })).status,
    ).toBe(400);
    expect((await b.call('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [] }], requiredLeases: [7] })).status).toBe(
      400,
    );
    expect((await b.call('POST', '/api/v1/transaction', { operations: [] })).status).toBe(400);
    expect((await b.call('POST', '/api/v1/transaction', { operations: [{ type: 'jump' }] })).status).toBe(400);
    const bad = await b.call('POST', '/api/v1/transaction', {
      operations: [
        { type: 'push', items: [{ queue: 'never', payload: 1 }] },
        { type: 'ack', status: 'completed' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(await segments('never')).toBe(0);
  });
});

describe('pop of encrypted payloads', () => {
  it('decrypts frames with flag 4 before answering', async () => {
    await db().query(`INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('default', 'sealed', true)`);
    await b.call('POST', '/api/v1/push', { items: [{ queue: 'sealed', payload: { card: '4111' } }] });
    const res = await b.call('GET', '/api/v1/pop/queue/sealed');
    expect(res.body.messages[0].data).toEqual({ card: '4111' });
    expect(offsets(res.body)).toEqual([0]);
  });
});

describe('tenancy on the read path', () => {
  it("keeps another tenant's queue, partitions and leases out of reach", async () => {
    const other = testClient(db, { as: { tenant: 'acme', sub: 'svc', role: 'read-write' } });
    await b.pushNumbered('shared-name', 'p', 2);
    expect((await other.pop('queue/shared-name?batch=5')).status).toBe(204);
    const { body } = await b.pop('queue/shared-name?batch=5');
    const stolen = await other.ackBatch([
      { transactionId: body.messages[0]!.transactionId, partitionId: body.partitionId, leaseId: body.leaseId, status: 'completed' },
    ]);
    expect(stolen.body[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Message not found: /) });
    const ext = await other.call('POST', `/api/v1/lease/${body.leaseId}/extend`, { seconds: 60 });
    expect(ext.body[0]).toMatchObject({ success: false, error: 'Lease not found' });
    expect(Number((await cursor(db(), 'shared-name', 'p')).committed)).toBe(-1);
    await other.pushNumbered('shared-name', 'p', 1);
    expect(offsets((await other.pop('queue/shared-name?batch=5')).body)).toEqual([0]);
  });
});
