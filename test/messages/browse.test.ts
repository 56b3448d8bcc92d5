// The message browser (GET /api/v1/messages) and the message detail's Queen keys, checked against
// what this file pushed, leased, acked and dead-lettered; list and detail must agree on status.
import { beforeAll, describe, expect, it } from 'vitest';
import { testClient, type PopBody, type Pushed } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db, { as: { tenant: 'browse' } });
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// br.orders/p1: segments [0,1] [2,3,4] [5]; queue mode acked 0-1 and leases 2-3.
// br.orders/p2: one segment [0,1,2], consumed by group "audit" (which has no cursor on p1).
// br.pay/p1: one segment [0,1]; queue mode dead-lettered 0.
// Pushed in that order, so newest first is br.pay, p2, then p1's segments backwards.
interface Expected {
  queue: string;
  partition: string;
  offset: number;
  status: string;
  consumedBy: number;
  pushed: Pushed;
}
const expected: Expected[] = [];
let lease: PopBody;

beforeAll(async () => {
  await api.configure('br.orders', { leaseTime: 3600 });
  const p1 = [
    ...(await api.pushNumbered('br.orders', 'p1', 2)),
    ...(await api.pushNumbered('br.orders', 'p1', 3, undefined, 2)),
    ...(await api.pushNumbered('br.orders', 'p1', 1, undefined, 5)),
  ];
  const p2 = await api.pushNumbered('br.orders', 'p2', 3);
  const pay = await api.pushNumbered('br.pay', 'p1', 2);
  await api.ackAll((await api.popQueue('br.orders', { batch: 2 }, 'p1')).body as PopBody);
  lease = (await api.popQueue('br.orders', { batch: 2 }, 'p1')).body as PopBody;
  await api.popQueue('br.orders', { consumerGroup: 'audit', batch: 3, autoAck: true }, 'p2');
  const dead = (await api.popQueue('br.pay', { batch: 1 }, 'p1')).body as PopBody;
  await api.ackAll(dead, 'dlq');

  const add = (queue: string, partition: string, pushed: Pushed[], status: (o: number) => string, consumedBy: (o: number) => number) => {
    for (const p of [...pushed].reverse())
      expected.push({ queue, partition, offset: p.offset, status: status(p.offset), consumedBy: consumedBy(p.offset), pushed: p });
  };
  add(
    'br.pay',
    'p1',
    pay,
    (o) => (o === 0 ? 'dead_letter' : 'pending'),
    () => 0,
  );
  // p2 has a queue-mode reader by subscription (from the beginning), which decides its status.
  add(
    'br.orders',
    'p2',
    p2,
    () => 'pending',
    () => 1,
  );
  add(
    'br.orders',
    'p1',
    p1,
    (o) => (o <= 1 ? 'completed' : o <= 3 ? 'processing' : 'pending'),
    () => 0,
  );
});

const list = async (query = '') => {
  const res = await api.call('GET', `/api/v1/messages${query ? `?${query}` : ''}`);
  expect(res.status).toBe(200);
  return res.body as { messages: any[]; mode: any };
};
const key = (m: { queue: string; partition: string; offset: number }) => `${m.queue}/${m.partition}@${m.offset}`;

describe('GET /api/v1/messages', () => {
  it("lists the window's messages newest first with Queen's fields and true statuses, without payloads", async () => {
    const { messages, mode } = await list();
    expect(messages.map(key)).toEqual(expected.map(key));
    expect(messages.map((m) => m.status)).toEqual(expected.map((e) => e.status));
    for (const [i, m] of messages.entries()) {
      const e = expected[i]!;
      expect(m).toEqual({
        id: e.pushed.message_id,
        transactionId: e.pushed.transaction_id,
        partitionId: e.pushed.partition_id,
        queuePath: `${e.queue}/${e.partition}`,
        queue: e.queue,
        partition: e.partition,
        namespace: 'br',
        task: e.queue.slice(3),
        status: e.status,
        queueStatus: e.status,
        busStatus: { consumedBy: e.consumedBy, totalGroups: e.queue === 'br.orders' ? 1 : 0 },
        traceId: null,
        producerSub: null,
        queuePriority: 0,
        createdAt: expect.stringMatching(ISO_MS),
        leaseExpiresAt: e.status === 'processing' ? expect.stringMatching(ISO_MS) : null,
        offset: e.offset,
      });
    }
    const times = messages.map((m) => m.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect(mode).toEqual({ hasQueueMode: true, busGroupsCount: 1, type: 'hybrid' });
  });

  it.each([
    ['queue=br.orders&partition=p1', (e: Expected) => e.queue === 'br.orders' && e.partition === 'p1'],
    ['status=processing', (e: Expected) => e.status === 'processing'],
    ['status=completed', (e: Expected) => e.status === 'completed'],
    ['status=pending', (e: Expected) => e.status === 'pending'],
    ['status=dead_letter', (e: Expected) => e.status === 'dead_letter'],
    ['ns=br&task=pay', (e: Expected) => e.queue === 'br.pay'],
    ['namespace=br&task=orders&status=pending', (e: Expected) => e.queue === 'br.orders' && e.status === 'pending'],
    ['ns=elsewhere', () => false],
  ])('filters with %s', async (query, keep) => {
    expect((await list(query)).messages.map(key)).toEqual(expected.filter(keep).map(key));
  });

  it('pages with limit and offset, with or without a status filter, in the same order', async () => {
    for (const [query, keep] of [
      ['', () => true],
      ['status=pending&', (e: Expected) => e.status === 'pending'],
    ] as const) {
      const want = expected.filter(keep).map(key);
      const pages: string[] = [];
      for (let offset = 0; offset < want.length + 3; offset += 3)
        pages.push(...(await list(`${query}limit=3&offset=${offset}`)).messages.map(key));
      expect(pages).toEqual(want);
    }
  });

  it('reads only the segments a page needs', async () => {
    for (let i = 0; i < 30; i++) await api.push('br.many', 'p', [i]);
    const segments = async (need: number, status: string | null) =>
      (
        await db().query<{ kind: string }>(
          `SELECT kind FROM queen.list_messages('browse', 'br.many', NULL, NULL, NULL, $1, NULL, NULL, $2)`,
          [status, need],
        )
      ).filter((r) => r.kind === 'seg').length;
    expect(await segments(5, null)).toBe(5);
    expect(await segments(5, 'pending')).toBe(5);
    expect(await segments(5, 'completed')).toBe(0);
    expect((await list('queue=br.many&limit=5&offset=2')).messages.map((m) => m.offset)).toEqual([27, 26, 25, 24, 23]);
  });

  it('takes from inclusively and rounds to up to the end of its minute, as Queen does', async () => {
    await api.push('br.clock', 'p', ['x']);
    const [{ minute }] = (await db().query<{ minute: Date }>(
      `UPDATE queen.log_segments s SET created_at = date_trunc('minute', now()) - interval '20 minutes' + interval '30 seconds'
         FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
        WHERE s.partition_id = p.id AND q.name = 'br.clock' RETURNING date_trunc('minute', s.created_at) AS minute`,
    )) as [{ minute: Date }];
    const at = (ms: number) => encodeURIComponent(new Date(minute.getTime() + ms).toISOString());
    const found = async (query: string) => (await list(`queue=br.clock&${query}`)).messages.length;
    expect(await found('')).toBe(1);
    expect(await found(`from=${at(30_000)}`)).toBe(1);
    expect(await found(`from=${at(30_001)}`)).toBe(0);
    expect(await found(`from=${at(-60_000)}&to=${at(0)}`)).toBe(1);
    expect(await found(`from=${at(-60_000)}&to=${at(-1)}`)).toBe(0);
  });

  it.each(['status=failed', 'limit=0', 'limit=1001', 'offset=-1', 'offset=9999&limit=2', 'from=yesterday', 'queue=a%2Fb'])(
    'answers %s with a 400',
    async (query) => {
      const res = await api.call('GET', `/api/v1/messages?${query}`);
      expect([res.status, res.body.code]).toEqual([400, 'invalid_query']);
    },
  );

  it('shows another tenant nothing', async () => {
    expect(
      await testClient(db, { as: { tenant: 'browse-other' } })
        .call('GET', '/api/v1/messages')
        .then((r) => r.body),
    ).toEqual({
      messages: [],
      mode: { hasQueueMode: false, busGroupsCount: 0, type: 'none' },
    });
  });
});

describe("GET /api/v1/messages/:partitionId/:transactionId (Queen's keys)", () => {
  it("agrees with the list on every message's status and adds payload, queueConfig, mode and the groups as Queen names them", async () => {
    for (const e of expected) {
      const res = await api.call('GET', `/api/v1/messages/${e.pushed.partition_id}/${e.pushed.transaction_id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: e.status, queuePath: `${e.queue}/${e.partition}`, namespace: 'br', offset: e.offset });
      expect(res.body.payload).toEqual(res.body.data);
    }
    const leased = expected.find((e) => e.status === 'processing')!;
    const res = (await api.call('GET', `/api/v1/messages/${leased.pushed.partition_id}/${leased.pushed.transaction_id}`)).body;
    expect(res).toMatchObject({
      payload: { n: leased.offset },
      isEncrypted: false,
      errorMessage: null,
      retryCount: null,
      leaseExpiresAt: expect.stringMatching(ISO_MS),
      queueConfig: { leaseTime: 3600, retryLimit: 3, retryDelay: 0, ttl: 0, priority: 0 },
      mode: { hasQueueMode: true, busGroupsCount: 1, consumedByGroups: 0, type: 'hybrid' },
    });
    expect(res.consumerGroups).toEqual([
      {
        name: '__QUEUE_MODE__',
        consumed: false,
        leaseExpiresAt: res.leaseExpiresAt,
        consumerGroup: '__QUEUE_MODE__',
        status: 'leased',
        committed: 1,
      },
      { name: 'audit', consumed: false, leaseExpiresAt: null, consumerGroup: 'audit', status: 'pending', committed: -1 },
    ]);
    expect(lease.leaseId).toMatch(/-/);
  });

  it('answers a dead letter with its error and retry count', async () => {
    const dead = expected.find((e) => e.status === 'dead_letter')!;
    const res = (await api.call('GET', `/api/v1/messages/${dead.pushed.partition_id}/${dead.pushed.transaction_id}`)).body;
    const [row] = await db().query<{ error_message: string | null; retry_count: number }>(
      'SELECT error_message, retry_count FROM queen.log_dlq WHERE partition_id = $1',
      [dead.pushed.partition_id],
    );
    expect(res).toMatchObject({ status: 'dead_letter', errorMessage: row!.error_message, retryCount: row!.retry_count });
    expect(res.consumerGroups).toEqual([expect.objectContaining({ name: '__QUEUE_MODE__', consumed: false, status: 'dead_letter' })]);
  });

  it('calls a message on a partition read only by named groups completed once every group has passed it', async () => {
    await api.pushNumbered('br.bus', 'p', 2);
    for (const g of ['g1', 'g2']) await api.popQueue('br.bus', { consumerGroup: g, batch: g === 'g1' ? 2 : 1, autoAck: true });
    const pid = (await list('queue=br.bus')).messages[0].partitionId;
    const statuses = await Promise.all([0, 1].map(async (o) => (await api.call('GET', `/api/v1/messages/${pid}/p-${o}`)).body));
    expect(statuses.map((m) => [m.status, m.mode.consumedByGroups, m.mode.type])).toEqual([
      ['completed', 2, 'bus'],
      ['pending', 1, 'bus'],
    ]);
    expect((await list('queue=br.bus')).messages.map((m) => [m.offset, m.status, m.busStatus])).toEqual([
      [1, 'pending', { consumedBy: 1, totalGroups: 2 }],
      [0, 'completed', { consumedBy: 2, totalGroups: 2 }],
    ]);
  });

  it('keeps the payload verbatim in both members', async () => {
    await api.call(
      'POST',
      '/api/v1/push',
      '{"items":[{"queue":"br.raw","transactionId":"raw-1","payload":{"big":12345678901234567890,"f":1.50}}]}',
    );
    const pid = (await list('queue=br.raw')).messages[0].partitionId;
    const res = await api.call('GET', `/api/v1/messages/${pid}/raw-1`);
    expect(res.text).toContain('"payload":{"big":12345678901234567890,"f":1.50}');
    expect(res.text).toContain('"data":{"big":12345678901234567890,"f":1.50}');
  });
});

describe('POST /api/v1/messages/:partitionId/:transactionId/dlq and DELETE', () => {
  it('answers 501 not_supported and says how to dead-letter instead', async () => {
    const e = expected.find((x) => x.status === 'pending')!;
    const res = await api.call('POST', `/api/v1/messages/${e.pushed.partition_id}/${e.pushed.transaction_id}/dlq`, {});
    expect([res.status, res.body.code]).toEqual([501, 'not_supported']);
    expect(res.body.error).toMatch(/status "dlq"/);
  });

  it("deletes only the DLQ copies, with Queen's success keys", async () => {
    const dead = expected.find((e) => e.status === 'dead_letter')!;
    const res = await api.call('DELETE', `/api/v1/messages/${dead.pushed.partition_id}/${dead.pushed.transaction_id}`);
    expect(res.body).toMatchObject({
      success: true,
      partitionId: dead.pushed.partition_id,
      transactionId: dead.pushed.transaction_id,
      message: expect.any(String),
      removed: 1,
    });
    expect((await api.call('GET', `/api/v1/messages/${dead.pushed.partition_id}/${dead.pushed.transaction_id}`)).body.status).toBe(
      'completed',
    );
  });
});
