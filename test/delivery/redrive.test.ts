import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { buildApp } from '../../lib/http/app.js';
import { testClient, type Msg, type TestClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const KEY = 'ab'.repeat(32);
const api = testClient(db, { config: { encryptionKey: KEY } });

/** Pops `count` messages one by one for the group and acks each `dlq`. */
async function deadLetter(client: TestClient, queue: string, group: string, partition: string, count: number) {
  for (let i = 0; i < count; i++) {
    const res = await client.popQueue(queue, { consumerGroup: group, batch: 1 }, partition);
    const m = res.body.messages[0] as Msg;
    const ack = await client.ack({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId,
      status: 'dlq',
      consumerGroup: group,
    });
    expect(ack.body[0]).toMatchObject({ dlq: true });
  }
}

/** Every message of the partition from `offset` on, read by a group no test acks with. */
async function readFrom(queue: string, partition: string, offset: number) {
  const reader = `reader-${Math.random().toString(36).slice(2)}`;
  await api.seek(reader, queue, { toEnd: true });
  await api.seek(reader, queue, { partition, offset });
  const res = await api.popQueue(queue, { consumerGroup: reader, batch: 1000, autoAck: true }, partition);
  return res.status === 204 ? [] : (res.body.messages as Msg[]);
}

const redrive = (body: unknown, client = api) => client.call('POST', '/api/v1/dlq/redrive', body);
const dlqCount = async (queue: string) => (await api.call('GET', `/api/v1/dlq?queue=${queue}`)).body.total as number;

describe('POST /api/v1/dlq/redrive', () => {
  it('re-pushes the dead letters in (partition, offset) order under fresh transactionIds, deletes them, and answers the counts', async () => {
    await api.configure('rd-order', { encryptionEnabled: true });
    await api.pushNumbered('rd-order', 'a', 3);
    await api.pushNumbered('rd-order', 'b', 2);
    await deadLetter(api, 'rd-order', 'g', 'b', 2);
    await deadLetter(api, 'rd-order', 'g', 'a', 3);
    const res = await redrive({ queue: 'rd-order' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ success: true, queue: 'rd-order', redriven: 5, removed: 5, chunks: 1, remaining: 0 });
    expect(await dlqCount('rd-order')).toBe(0);
    const a = await readFrom('rd-order', 'a', 3);
    expect(a.map((m) => m.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(a.map((m) => m.offset)).toEqual([3, 4, 5]);
    expect(new Set(a.map((m) => m.transactionId)).size).toBe(3);
    for (const m of a) expect(m.transactionId).not.toMatch(/^a-/);
    expect((await readFrom('rd-order', 'b', 2)).map((m) => m.data)).toEqual([{ n: 0 }, { n: 1 }]);
  });

  it('re-pushes nothing twice when a call is retried after its answer was lost', async () => {
    await api.pushNumbered('rd-retry', 'p', 4);
    await deadLetter(api, 'rd-retry', 'g', 'p', 4);
    const first = await redrive({ queue: 'rd-retry' });
    expect(first.body.redriven).toBe(4);
    const again = await redrive({ queue: 'rd-retry' });
    expect(again.body).toMatchObject({ redriven: 0, removed: 0, remaining: 0 });
    expect(await readFrom('rd-retry', 'p', 4)).toHaveLength(4);
  });

  it('re-pushes a message once however many groups dead-lettered it, and a group filter takes that group only', async () => {
    await api.pushNumbered('rd-groups', 'p', 2);
    await deadLetter(api, 'rd-groups', 'g1', 'p', 2);
    await deadLetter(api, 'rd-groups', 'g2', 'p', 2);
    const one = await redrive({ queue: 'rd-groups', consumerGroup: 'g2', limit: 1 });
    expect(one.body).toMatchObject({ redriven: 1, removed: 1, remaining: 1 });
    const rest = await redrive({ queue: 'rd-groups' });
    expect(rest.body).toMatchObject({ redriven: 2, removed: 3, remaining: 0 });
    expect((await readFrom('rd-groups', 'p', 2)).map((m) => m.data)).toEqual([{ n: 0 }, { n: 0 }, { n: 1 }]);
  });

  it('filters by partition and failure time, and goes chunk by chunk when payloads pass the body limit', async () => {
    const pad = 'x'.repeat(60);
    await api.push(
      'rd-filter',
      'x',
      [0, 1, 2].map((n) => ({ n, pad })),
    );
    await api.pushNumbered('rd-filter', 'y', 1);
    await deadLetter(api, 'rd-filter', 'g', 'x', 3);
    await deadLetter(api, 'rd-filter', 'g', 'y', 1);
    expect((await redrive({ queue: 'rd-filter', to: '2000-01-01T00:00:00Z' })).body).toMatchObject({ redriven: 0, remaining: 0 });
    expect((await redrive({ queue: 'rd-filter', from: '2000-01-01T00:00:00Z', partition: 'y' })).body).toMatchObject({
      redriven: 1,
      remaining: 0,
    });
    // A body limit that holds the request but not two of these payloads: one message a chunk.
    const tiny = testClient(db, { config: { encryptionKey: KEY, maxBodyBytes: 100 } });
    expect((await redrive({ queue: 'rd-filter', partition: 'x', limit: 2 }, tiny)).body).toMatchObject({
      redriven: 2,
      chunks: 2,
      remaining: 1,
    });
    expect((await readFrom('rd-filter', 'x', 3)).map((m) => m.data)).toEqual([
      { n: 0, pad },
      { n: 1, pad },
    ]);
  });

  it('answers 404 for a queue that does not exist or belongs to another tenant', async () => {
    expect((await redrive({ queue: 'rd-missing' })).body.code).toBe('queue_not_found');
    await api.pushNumbered('rd-tenant', 'p', 1);
    await deadLetter(api, 'rd-tenant', 'g', 'p', 1);
    const other = testClient(db, { as: { tenant: 'other' } });
    expect((await redrive({ queue: 'rd-tenant' }, other)).status).toBe(404);
    expect(await dlqCount('rd-tenant')).toBe(1);
  });

  it('tells the runtime which queue the re-pushes wrote to, as a push does, so subscriptions deliver them at once', async () => {
    await api.pushNumbered('rd-trigger', 'p', 2);
    await deadLetter(api, 'rd-trigger', 'g', 'p', 2);
    const triggered: string[][] = [];
    const app = buildApp(allFunctions, {
      config: api.config,
      database: db,
      log: () => {},
      afterPush: async (_db, tenant, queues) => void triggered.push([tenant, ...queues]),
    });
    const post = (path: string, body: unknown) =>
      app.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const [one] = (await (
      await api.call('GET', '/api/v1/dlq?queue=rd-trigger&limit=1')
    ).body.messages) as { partitionId: string; transactionId: string }[];
    expect((await post(`/api/v1/messages/${one!.partitionId}/${one!.transactionId}/retry`, {})).status).toBe(200);
    expect((await post('/api/v1/dlq/redrive', { queue: 'rd-trigger' })).status).toBe(200);
    expect((await post('/api/v1/dlq/redrive', { queue: 'rd-trigger' })).status).toBe(200);
    expect(triggered).toEqual([
      ['default', 'rd-trigger'],
      ['default', 'rd-trigger'],
    ]);
  });

  it.each([
    [{}, 'queue'],
    [{ queue: 'q', limit: 0 }, 'limit'],
    [{ queue: 'q', limit: 100001 }, 'limit'],
    [{ queue: 'q', from: '2026-02-30' }, 'from'],
    [{ queue: 'q', partitions: 'p' }, 'partitions'],
    [[], 'Send'],
  ])('refuses %j with a 400 naming %s', async (body, named) => {
    const res = await redrive(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(named);
  });
});
