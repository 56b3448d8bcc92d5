import { beforeAll, describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { runRetention } from '../../lib/broker/retention.js';
import { backdate } from './helpers.js';

const db = useDatabase();
const KEY = 'ab'.repeat(32);
const api = testClient(db, { config: { encryptionKey: KEY } });

interface Popped {
  transactionId: string;
  partitionId: string;
  leaseId: string;
  offset: number;
}

/** Pops the next message for the group and acks it `dlq` through the real routes. */
async function deadLetter(queue: string, group: string, partition?: string, error = 'boom'): Promise<Popped> {
  const res = await api.popQueue(queue, { consumerGroup: group, batch: 1 }, partition);
  expect(res.status).toBe(200);
  const m = res.body.messages[0] as Popped;
  const ack = await api.ack({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    leaseId: m.leaseId,
    status: 'dlq',
    consumerGroup: group,
    error,
  });
  expect(ack.body[0]).toMatchObject({ success: true, dlq: true });
  return m;
}

const dlq = (query = '') => api.call('GET', `/api/v1/dlq${query ? `?${query}` : ''}`);

describe('GET /api/v1/dlq', () => {
  beforeAll(async () => {
    await api.push('orders', 'eu', [{ n: 1 }, { n: 2 }, { n: 3 }], ['o1', 'o2', 'o3']);
    await api.push('orders', 'us', [{ n: 4 }], ['o4']);
    await api.push('audit', 'eu', [{ n: 5 }], ['a1']);
    await deadLetter('orders', 'billing', 'eu', 'first');
    await deadLetter('orders', 'billing', 'eu', 'second');
    await deadLetter('orders', 'shipping', 'eu', 'third');
    await deadLetter('orders', 'billing', 'us', 'fourth');
    await deadLetter('audit', 'billing', 'eu', 'fifth');
    // Distinct failure times, in the order above.
    await db().query(
      "UPDATE queen.log_dlq SET failed_at = '2026-01-01T00:00:00Z'::timestamptz + (CASE error_message WHEN 'first' THEN 1 WHEN 'second' THEN 2 WHEN 'third' THEN 3 WHEN 'fourth' THEN 4 ELSE 5 END) * interval '1 hour'",
    );
    const other = testClient(db, { as: { tenant: 'acme' } });
    await other.push('orders', 'eu', [{ secret: true }]);
    const m = (await other.popQueue('orders', { consumerGroup: 'billing' })).body.messages[0]!;
    await other.ack({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId,
      status: 'dlq',
      consumerGroup: 'billing',
    });
  });

  it('lists newest failure first with the fields of docs/api.md#dead-letters, total and pagination', async () => {
    const res = await dlq();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(5);
    expect(res.body.pagination).toEqual({ limit: 100, offset: 0 });
    expect(res.body.messages.map((m: { errorMessage: string }) => m.errorMessage)).toEqual(['fifth', 'fourth', 'third', 'second', 'first']);
    expect(Object.keys(res.body.messages[0]).sort()).toEqual(
      [
        'consumerGroup',
        'createdAt',
        'data',
        'errorMessage',
        'failedAt',
        'id',
        'offset',
        'partition',
        'partitionId',
        'producerSub',
        'queue',
        'retryCount',
        'traceId',
        'transactionId',
      ].sort(),
    );
    expect(res.body.messages[3]).toMatchObject({
      queue: 'orders',
      partition: 'eu',
      consumerGroup: 'billing',
      transactionId: 'o2',
      offset: 1,
      data: { n: 2 },
      failedAt: '2026-01-01T02:00:00.000Z',
    });
  });

  it('pages with limit and offset while total stays the full count', async () => {
    const page = await dlq('limit=2&offset=2');
    expect(page.body.total).toBe(5);
    expect(page.body.pagination).toEqual({ limit: 2, offset: 2 });
    expect(page.body.messages.map((m: { errorMessage: string }) => m.errorMessage)).toEqual(['third', 'second']);
    const past = await dlq('limit=2&offset=10');
    expect(past.body).toMatchObject({ messages: [], total: 5 });
  });

  it.each([
    ['queue=orders', ['fourth', 'third', 'second', 'first']],
    ['queue=audit', ['fifth']],
    ['consumerGroup=shipping', ['third']],
    ['queue=orders&partition=eu', ['third', 'second', 'first']],
    ['partition=eu&consumerGroup=billing', ['fifth', 'second', 'first']],
    ['from=2026-01-01T02:30:00Z', ['fifth', 'fourth', 'third']],
    ['to=2026-01-01T02:00:00Z', ['second', 'first']],
    ['queue=orders&from=2026-01-01T01:30:00Z&to=2026-01-01T03:30:00Z', ['third', 'second']],
    ['queue=nothing', []],
  ])('filters by %s without leaking rows of other queues or tenants', async (query, expected) => {
    const res = await dlq(query);
    expect(res.body.messages.map((m: { errorMessage: string }) => m.errorMessage)).toEqual(expected);
    expect(res.body.total).toBe(expected.length);
  });

  it.each([['limit=0'], ['limit=1001'], ['offset=-1'], ['limit=abc'], ['from=yesterday'], ['queue=a%2Fb']])(
    'refuses %s with a 400',
    async (query) => {
      const res = await dlq(query);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_query');
    },
  );
});

describe('payloads in the DLQ', () => {
  it('embeds the payload text exactly as the producer sent it', async () => {
    const raw = '{"big":12345678901234567890123,"f":1.0,"s":"\\u00e9"}';
    const push = await api.call('POST', '/api/v1/push', `{"items":[{"queue":"verbatim","payload":${raw},"transactionId":"v1"}]}`);
    expect(push.status).toBe(201);
    await deadLetter('verbatim', 'g');
    const res = await dlq('queue=verbatim');
    expect(res.text).toContain(`"data":${raw}`);
    const detail = await api.call('GET', `/api/v1/messages/${res.body.messages[0].partitionId}/v1`);
    expect(detail.text).toContain(`"data":${raw}`);
  });

  it('decrypts the payload of an encrypted queue, which the DLQ stores still encrypted', async () => {
    await api.configure('sealed', { encryptionEnabled: true });
    await api.push('sealed', 'Default', [{ card: '4111' }], ['s1']);
    await deadLetter('sealed', 'g');
    const [row] = await db().query<{ payload: Uint8Array; encrypted: boolean }>(
      "SELECT payload, encrypted FROM queen.log_dlq WHERE transaction_id = 's1'",
    );
    expect(row!.encrypted).toBe(true);
    expect(new TextDecoder().decode(row!.payload)).not.toContain('4111');
    expect((await dlq('queue=sealed')).body.messages[0].data).toEqual({ card: '4111' });
  });
});

describe('GET /api/v1/messages/:partitionId/:transactionId', () => {
  it("decodes the message from its segment with each group's status", async () => {
    await api.push('status', 'Default', ['m0', 'm1', 'm2'], ['t0', 't1', 't2']);
    await api.popQueue('status', { consumerGroup: 'done', batch: 3, autoAck: true });
    await api.popQueue('status', { consumerGroup: 'holding', batch: 3 });
    await api.popQueue('status', { consumerGroup: 'behind', batch: 1, autoAck: true });
    await deadLetter('status', 'dead', 'Default');
    // Subscribes through another partition: no cursor on Default, whose messages predate it.
    await api.push('status', 'other', ['o']);
    await api.popQueue('status', { consumerGroup: 'latecomer', subscriptionMode: 'new' }, 'other');
    const dead2 = await deadLetter('status', 'dead', 'Default');
    expect(dead2.transactionId).toBe('t1');
    const res = await api.call('GET', `/api/v1/messages/${dead2.partitionId}/t1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      transactionId: 't1',
      data: 'm1',
      offset: 1,
      queue: 'status',
      partition: 'Default',
      partitionId: dead2.partitionId,
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const statuses = Object.fromEntries(
      res.body.consumerGroups.map((g: { consumerGroup: string; status: string }) => [g.consumerGroup, g.status]),
    );
    expect(statuses).toEqual({ behind: 'pending', dead: 'dead_letter', done: 'completed', holding: 'leased', latecomer: 'completed' });
  });

  it('answers a dead-lettered message from its DLQ copy once retention deleted its segment', async () => {
    await api.configure('expired', { retentionEnabled: true, retentionSeconds: 60 });
    await api.push('expired', 'Default', [{ keep: 'me' }], ['e1']);
    await api.push('expired', 'Default', ['later'], ['e2']);
    const m = await deadLetter('expired', 'g');
    await backdate(db(), 'expired', 120, 's.base_offset = 0');
    await runRetention(db());
    const res = await api.call('GET', `/api/v1/messages/${m.partitionId}/e1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ transactionId: 'e1', offset: 0, data: { keep: 'me' } });
    expect(res.body.consumerGroups).toEqual([expect.objectContaining({ consumerGroup: 'g', status: 'dead_letter' })]);
    await api.call('DELETE', `/api/v1/messages/${m.partitionId}/e1`);
    expect((await api.call('GET', `/api/v1/messages/${m.partitionId}/e1`)).status).toBe(404);
  });

  it("answers 404 for an unknown transactionId or another tenant's partition, 400 for a malformed partitionId", async () => {
    const pid = (await api.push('status', 'Default', ['x']))[0]!.partition_id;
    expect((await api.call('GET', `/api/v1/messages/${pid}/nope`)).status).toBe(404);
    const other = testClient(db, { as: { tenant: 'acme' } });
    expect((await other.call('GET', `/api/v1/messages/${pid}/t1`)).status).toBe(404);
    expect((await api.call('GET', '/api/v1/messages/abc/t1')).body.code).toBe('invalid_partition_id');
  });
});

describe('retry and delete', () => {
  it("re-pushes the payload at the tail under a fresh transactionId and removes every group's row", async () => {
    await api.push('again', 'Default', [{ id: 'r' }, { id: 'next' }], ['r1', 'r2']);
    const m = await deadLetter('again', 'a');
    await deadLetter('again', 'b');
    const res = await api.call('POST', `/api/v1/messages/${m.partitionId}/r1/retry`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, offset: 2 });
    expect(res.body.transactionId).not.toBe('r1');
    expect(res.body.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await dlq('queue=again')).body.total).toBe(0);

    const a = await api.popQueue('again', { consumerGroup: 'a', batch: 10 });
    expect(
      a.body.messages.map((x: { transactionId: string; data: unknown; offset: number }) => [x.offset, x.transactionId, x.data]),
    ).toEqual([
      [1, 'r2', { id: 'next' }],
      [2, res.body.transactionId, { id: 'r' }],
    ]);
    expect((await api.call('POST', `/api/v1/messages/${m.partitionId}/r1/retry`)).status).toBe(404);
  });

  it("retries only the named group's row when consumerGroup is given", async () => {
    await api.push('one-group', 'Default', ['x'], ['g1']);
    const m = await deadLetter('one-group', 'a');
    await deadLetter('one-group', 'b');
    const res = await api.call('POST', `/api/v1/messages/${m.partitionId}/g1/retry`, { consumerGroup: 'a' });
    expect(res.status).toBe(200);
    const left = await dlq('queue=one-group');
    expect(left.body.messages.map((x: { consumerGroup: string }) => x.consumerGroup)).toEqual(['b']);
  });

  it('deletes the DLQ rows and answers 404 once they are gone', async () => {
    await api.push('drop', 'Default', ['x'], ['d1']);
    const m = await deadLetter('drop', 'a');
    await deadLetter('drop', 'b');
    const res = await api.call('DELETE', `/api/v1/messages/${m.partitionId}/d1`);
    expect(res.body).toMatchObject({ deleted: true, removed: 2 });
    expect((await dlq('queue=drop')).body.total).toBe(0);
    expect((await api.call('DELETE', `/api/v1/messages/${m.partitionId}/d1`)).status).toBe(404);
    const other = testClient(db, { as: { tenant: 'acme' } });
    await api.push('drop', 'Default', ['y'], ['d2']);
    const m2 = await deadLetter('drop', 'a');
    expect((await other.call('DELETE', `/api/v1/messages/${m2.partitionId}/d2`)).status).toBe(404);
    expect((await dlq('queue=drop')).body.total).toBe(1);
  });
});
