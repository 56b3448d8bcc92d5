import { describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { partitionRow } from './helpers.js';

const db = useDatabase();
const api = testClient(db);

const count = async (sql: string, params: unknown[] = []) => Number((await db().query<{ n: string }>(sql, params))[0]!.n);

describe('queue resources', () => {
  it("lists queues with partitions, total and pending messages, and only the caller tenant's", async () => {
    await api.push('list.a', 'p1', [1, 2, 3]);
    await api.push('list.a', 'p2', [4]);
    await api.push('list.b', 'Default', [5, 6]);
    const others = testClient(db, { as: { tenant: 'acme' } });
    await others.push('secret.queue', 'Default', [1]);

    const res = await api.call('GET', '/api/v1/resources/queues');
    expect(res.status).toBe(200);
    const a = res.body.queues.find((q: { name: string }) => q.name === 'list.a');
    expect(a).toMatchObject({ namespace: 'list', task: 'a', partitions: 2, messages: { total: 4, pending: 4 } });
    expect(a.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(res.body.queues.map((q: { name: string }) => q.name)).not.toContain('secret.queue');
    expect((await others.call('GET', '/api/v1/resources/queues')).body.queues.map((q: { name: string }) => q.name)).toEqual([
      'secret.queue',
    ]);
  });

  it('filters the listing by namespace and task', async () => {
    const res = await api.call('GET', '/api/v1/resources/queues?namespace=list&task=b');
    expect(res.body.queues.map((q: { name: string }) => q.name)).toEqual(['list.b']);
  });

  it('groups queues by namespace and by task', async () => {
    const ns = await api.call('GET', '/api/v1/resources/namespaces');
    const list = ns.body.namespaces.find((n: { namespace: string }) => n.namespace === 'list');
    expect(list).toMatchObject({ queues: 2, queueNames: ['list.a', 'list.b'] });
    expect(list.messages.total).toBe(6);
    const tasks = await api.call('GET', '/api/v1/resources/tasks');
    expect(tasks.body.tasks.find((t: { task: string }) => t.task === 'b')).toMatchObject({ queues: 1, queueNames: ['list.b'] });
  });

  it('details a queue with per-partition watermarks and per-group committed and lag', async () => {
    await api.push('detail', 'Default', ['a', 'b', 'c', 'd']);
    await api.seek('g1', 'detail', { offset: 2, partition: 'Default' });
    const res = await api.describe('detail');
    expect(res.status).toBe(200);
    expect(res.body.options.leaseTime).toBe(60);
    expect(res.body.partitions).toHaveLength(1);
    expect(res.body.partitions[0]).toMatchObject({
      name: 'Default',
      last_offset: 3,
      log_start: 0,
      consumerGroups: [{ consumerGroup: 'g1', committed: 1, lag: 2, leased: false }],
    });
  });

  it("answers 404 for a missing queue and for another tenant's queue, 400 for a bad name", async () => {
    expect((await api.describe('nope')).status).toBe(404);
    expect((await api.describe('secret.queue')).body.code).toBe('queue_not_found');
    expect((await api.call('GET', '/api/v1/resources/queues/%20lead')).status).toBe(400);
  });

  it('deletes a queue with its partitions, segments, sidecar rows, cursors, subscriptions and DLQ rows', async () => {
    await api.push('doomed', 'p1', [1, 2]);
    await api.push('doomed', 'p2', [3]);
    await api.push('survivor', 'p1', [1]);
    await api.seek('g', 'doomed', { toEnd: true });
    const p1 = await partitionRow(db(), 'doomed', 'p1');
    await db().query(
      `INSERT INTO queen.log_dlq (partition_id, consumer_group, msg_offset, message_id, transaction_id, payload, created_at)
       VALUES ($1, 'g', 0, gen_random_uuid(), 't', '\\x31', now())`,
      [p1.id],
    );
    const ids = (
      await db().query<{ id: string }>(
        "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'doomed'",
      )
    ).map((r) => r.id);
    const txnsBefore = await count('SELECT count(*) AS n FROM queen.log_txns');

    const res = await api.call('DELETE', '/api/v1/resources/queues/doomed');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true, queue: 'doomed', existed: true });
    expect(await count('SELECT count(*) AS n FROM queen.log_partitions WHERE id = ANY($1::bigint[])', [ids])).toBe(0);
    for (const table of ['log_segments', 'log_txns', 'log_consumers', 'log_dlq']) {
      expect(await count(`SELECT count(*) AS n FROM queen.${table} WHERE partition_id = ANY($1::bigint[])`, [ids])).toBe(0);
    }
    expect(
      await count(
        'SELECT count(*) AS n FROM queen.consumer_subscriptions s WHERE NOT EXISTS (SELECT 1 FROM queen.queues q WHERE q.id = s.queue_id)',
      ),
    ).toBe(0);
    expect(await count('SELECT count(*) AS n FROM queen.log_txns')).toBe(txnsBefore - 2);
    expect((await api.describe('survivor')).status).toBe(200);
  });

  it('answers existed:false when deleting a queue that is absent or belongs to another tenant', async () => {
    expect((await api.call('DELETE', '/api/v1/resources/queues/doomed')).body).toEqual({ deleted: true, queue: 'doomed', existed: false });
    const res = await api.call('DELETE', '/api/v1/resources/queues/secret.queue');
    expect(res.body.existed).toBe(false);
    expect(await count("SELECT count(*) AS n FROM queen.queues WHERE name = 'secret.queue'")).toBe(1);
  });

  it('lets read-only tokens list but not delete', async () => {
    const reader = testClient(db, { as: { role: 'read-only' } });
    expect((await reader.call('GET', '/api/v1/resources/queues')).status).toBe(200);
    expect((await reader.call('GET', '/api/v1/consumer-groups')).status).toBe(200);
    expect((await reader.call('DELETE', '/api/v1/resources/queues/survivor')).status).toBe(403);
    expect((await reader.call('POST', '/api/v1/consumer-groups/g/queues/survivor/seek', { toEnd: true })).status).toBe(403);
    expect((await reader.call('DELETE', '/api/v1/consumer-groups/g')).status).toBe(403);
  });

  it.each([
    ['GET', '/api/v1/resources/queues?namespace=%20x'],
    ['GET', '/api/v1/consumer-groups?queue=a%2Fb'],
    ['DELETE', '/api/v1/consumer-groups/%20g'],
    ['DELETE', '/api/v1/consumer-groups/g/queues/%20q'],
    ['POST', '/api/v1/consumer-groups/g%2Fh/queues/q/seek'],
    ['GET', `/api/v1/messages/1/${'x'.repeat(256)}`],
    ['GET', '/api/v1/messages/0/t'],
    ['DELETE', '/api/v1/messages/-5/t'],
  ])('answers %s %s with a 400 that names the problem', async (method, path) => {
    const res = await api.call(method, path, method === 'POST' ? { toEnd: true } : undefined);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/must/);
  });

  it('refuses a retry body that is not JSON or names a bad group', async () => {
    expect((await api.call('POST', '/api/v1/messages/1/t/retry', '{oops')).body.code).toBe('invalid_json');
    expect((await api.call('POST', '/api/v1/messages/1/t/retry', { consumerGroup: 7 })).status).toBe(400);
    expect((await api.call('POST', '/api/v1/messages/1/t/retry')).status).toBe(404);
  });
});
