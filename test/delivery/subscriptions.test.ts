import { describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
// A public address literal: no DNS lookup, and no delivery is made by these tests.
const URL_OK = 'https://93.184.216.34/hooks/queen';
const api = () => testClient(db, { config: { deliveryAllowPrivate: false } });

async function create(body: Record<string, unknown>) {
  const res = await api().call('POST', '/api/v1/subscriptions', { url: URL_OK, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('POST /api/v1/subscriptions', () => {
  it('answers 201 with every option filled in, the group defaulting to the name, and a whsec_ secret of 32 bytes', async () => {
    const s = await create({ queue: 'orders', name: 'billing' });
    expect(s).toMatchObject({
      queue: 'orders',
      name: 'billing',
      consumerGroup: 'billing',
      url: URL_OK,
      state: 'active',
      pausedReason: null,
      options: {
        batchSize: 10,
        maxInFlight: 16,
        timeoutMs: 15000,
        rateLimit: 0,
        retryBaseMs: 1000,
        retryMaxMs: 300000,
        subscriptionMode: 'all',
        disableAfterMs: 86400000,
        headers: [],
      },
    });
    expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(s.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.secret.slice(6), 'base64')).toHaveLength(32);
    expect(Date.parse(s.createdAt)).not.toBeNaN();
  });

  it('provisions a missing queue as a push would and records the group subscription with its mode', async () => {
    await create({ queue: 'fresh-queue', name: 'n1', consumerGroup: 'g-new', options: { subscriptionMode: 'new' } });
    expect((await api().describe('fresh-queue')).status).toBe(200);
    const [row] = await db().query<{ mode: string; start_at: Date | null }>(
      `SELECT cs.mode, cs.start_at FROM queen.consumer_subscriptions cs JOIN queen.queues q ON q.id = cs.queue_id WHERE q.name = 'fresh-queue' AND cs.consumer_group = 'g-new'`,
    );
    expect(row?.mode).toBe('new');
    expect(row?.start_at).toBeInstanceOf(Date);
  });

  it('answers 409 subscription_exists for a taken name or a group another subscription delivers, and writes nothing', async () => {
    await create({ queue: 'dup', name: 'a' });
    for (const body of [
      { name: 'a', consumerGroup: 'other' },
      { name: 'b', consumerGroup: 'a' },
    ]) {
      const res = await api().call('POST', '/api/v1/subscriptions', { queue: 'dup', url: URL_OK, ...body });
      expect([res.status, res.body.code]).toEqual([409, 'subscription_exists']);
    }
    const rows = await db().query(`SELECT 1 FROM queen.subscriptions s JOIN queen.queues q ON q.id = s.queue_id WHERE q.name = 'dup'`);
    expect(rows).toHaveLength(1);
  });

  it.each([
    [{ options: { batchSize: 0 } }, 'options.batchSize'],
    [{ options: { batchSize: 1001 } }, 'options.batchSize'],
    [{ options: { maxInFlight: 1.5 } }, 'options.maxInFlight'],
    [{ options: { timeoutMs: 999 } }, 'options.timeoutMs'],
    [{ options: { timeoutMs: 25001 } }, 'options.timeoutMs'],
    [{ options: { rateLimit: -1 } }, 'options.rateLimit'],
    [{ options: { retryBaseMs: '1000' } }, 'options.retryBaseMs'],
    [{ options: { retryBaseMs: 5000, retryMaxMs: 2000 } }, 'options.retryMaxMs'],
    [{ options: { disableAfterMs: 1e20 } }, 'options.disableAfterMs'],
    [{ options: { subscriptionMode: 'latest' } }, 'options.subscriptionMode'],
    [{ options: { headers: { 'webhook-id': 'x' } } }, 'options.headers'],
    [{ options: { headers: { 'bad name': 'x' } } }, 'options.headers'],
    [{ options: { headers: { authorization: 'a\r\nb' } } }, 'options.headers'],
    [{ options: { headers: ['authorization'] } }, 'options.headers'],
    [{ options: { bachSize: 10 } }, 'unknown key `bachSize` in options: did you mean `batchSize`?'],
    [{ batchSize: 10 }, 'did you mean `options.batchSize`?'],
    [{ options: [] }, 'options must be an object'],
    [{ url: 'ftp://93.184.216.34/x' }, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ name: '' }, 'name'],
    [{ queue: 'a/b' }, 'queue'],
    [{ secret: 'whsec_mine' }, 'secret'],
  ])('refuses %j with a 400 naming %s, writing nothing', async (patch, named) => {
    const res = await api().call('POST', '/api/v1/subscriptions', { queue: 'bad-input', name: 'x', url: URL_OK, ...patch });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(named);
    expect(await db().query(`SELECT 1 FROM queen.queues WHERE name = 'bad-input'`)).toHaveLength(0);
  });

  it('refuses a body that is not JSON or not an object', async () => {
    expect((await api().call('POST', '/api/v1/subscriptions', '{')).body.code).toBe('invalid_json');
    expect((await api().call('POST', '/api/v1/subscriptions', [1])).status).toBe(400);
  });
});

describe('GET /api/v1/subscriptions and /:id', () => {
  it('lists without secrets or header values, with state, lag, inFlight and lastAttempt, filtered by queue', async () => {
    await create({ queue: 'listed', name: 'l1', options: { headers: { Authorization: 'Bearer very-secret-token' } } });
    await create({ queue: 'listed-other', name: 'l2' });
    await api().pushNumbered('listed', 'p0', 3);
    const res = await api().call('GET', '/api/v1/subscriptions?queue=listed');
    expect(res.status).toBe(200);
    expect(res.body.subscriptions).toHaveLength(1);
    const s = res.body.subscriptions[0];
    expect(s).toMatchObject({
      name: 'l1',
      state: 'active',
      pausedReason: null,
      lag: 3,
      inFlight: 0,
      lastAttempt: null,
      options: { headers: ['authorization'] },
    });
    expect(res.text).not.toContain('very-secret-token');
    expect(res.text).not.toContain('whsec_');
    const all = await api().call('GET', '/api/v1/subscriptions');
    expect(all.body.subscriptions.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['l1', 'l2']));
  });

  it('details one subscription: per-partition lag, counters and its last 20 attempts, newest first', async () => {
    const s = await create({ queue: 'detailed', name: 'd1' });
    await api().pushNumbered('detailed', 'p0', 2);
    await api().pushNumbered('detailed', 'p1', 5);
    const [p0] = await db().query<{ id: string }>(
      `SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'detailed' AND p.name = 'p0'`,
    );
    for (let i = 1; i <= 25; i++) {
      await db().query(
        `INSERT INTO queen.subscription_attempts (subscription_id, partition_id, from_offset, to_offset, webhook_id, attempt, outcome, status, latency_ms, response)
         VALUES ($1, $2, 0, 1, 'msg_x', $3, 'failed', 500, 12, 'oops')`,
        [s.id, p0!.id, i],
      );
    }
    const res = await api().call('GET', `/api/v1/subscriptions/${s.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ lag: 7, inFlight: 0, delivered: 0, failedAttempts: 0, deadLettered: 0 });
    expect(res.body.partitions.map((p: { partition: string; lag: number }) => [p.partition, p.lag])).toEqual([
      ['p0', 2],
      ['p1', 5],
    ]);
    expect(res.body.partitions[0]).toHaveProperty('nextAttemptAt', null);
    expect(res.body.attempts).toHaveLength(20);
    expect(res.body.attempts[0]).toMatchObject({
      attempt: 25,
      partition: 'p0',
      fromOffset: 0,
      toOffset: 1,
      outcome: 'failed',
      status: 500,
      latencyMs: 12,
      response: 'oops',
    });
    expect(res.body.lastAttempt.attempt).toBe(25);
    expect(res.text).not.toContain('whsec_');
  });

  it("shows the dispatcher's batch in a request as inFlight and a held-back retry as nextAttemptAt", async () => {
    const s = await create({ queue: 'in-flight', name: 'f1' });
    await api().pushNumbered('in-flight', 'p0', 4);
    await api().pushNumbered('in-flight', 'p1', 4);
    const ids = await db().query<{ id: string; name: string }>(
      `SELECT p.id, p.name FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'in-flight' ORDER BY p.name`,
    );
    await db().query(
      `INSERT INTO queen.subscription_partitions (subscription_id, partition_id, from_offset, to_offset, webhook_id, lease_until, next_attempt_at)
       VALUES ($1, $2, 0, 2, 'msg_a', now() + interval '10 seconds', NULL), ($1, $3, 0, 3, 'msg_b', NULL, now() + interval '1 minute')`,
      [s.id, ids[0]!.id, ids[1]!.id],
    );
    const res = await api().call('GET', `/api/v1/subscriptions/${s.id}`);
    expect(res.body.inFlight).toBe(3);
    expect(res.body.partitions.map((p: { inFlight: number }) => p.inFlight)).toEqual([3, 0]);
    expect(res.body.partitions[0].nextAttemptAt).toBeNull();
    expect(Date.parse(res.body.partitions[1].nextAttemptAt)).toBeGreaterThan(Date.now());
    expect((await api().call('GET', '/api/v1/subscriptions?queue=in-flight')).body.subscriptions[0].inFlight).toBe(3);
  });

  it('answers 404 for an unknown id and 400 for one that is not a UUID', async () => {
    expect((await api().call('GET', '/api/v1/subscriptions/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).body.code).toBe(
      'subscription_not_found',
    );
    expect((await api().call('GET', '/api/v1/subscriptions/42')).body.code).toBe('invalid_subscription_id');
    expect((await api().call('GET', '/api/v1/subscriptions?queue=a%2Fb')).status).toBe(400);
  });
});

describe('GET /api/v1/subscriptions/:id/attempts', () => {
  it('pages the delivery log newest first with limit and before', async () => {
    const s = await create({ queue: 'paged', name: 'pg' });
    for (let i = 1; i <= 5; i++) {
      await db().query(
        `INSERT INTO queen.subscription_attempts (subscription_id, partition_id, from_offset, to_offset, webhook_id, attempt, outcome, error, latency_ms)
         VALUES ($1, 1, $2, $2, 'msg_y', 1, 'failed', 'timeout', 15000)`,
        [s.id, i],
      );
    }
    const first = await api().call('GET', `/api/v1/subscriptions/${s.id}/attempts?limit=2`);
    expect(first.body.attempts.map((a: { fromOffset: number }) => a.fromOffset)).toEqual([5, 4]);
    expect(first.body.attempts[0]).toMatchObject({ status: null, error: 'timeout', latencyMs: 15000 });
    const next = await api().call('GET', `/api/v1/subscriptions/${s.id}/attempts?limit=10&before=${first.body.attempts[1].id}`);
    expect(next.body.attempts.map((a: { fromOffset: number }) => a.fromOffset)).toEqual([3, 2, 1]);
    for (const q of ['limit=0', 'limit=1001', 'before=x', 'before=-1']) {
      expect((await api().call('GET', `/api/v1/subscriptions/${s.id}/attempts?${q}`)).status, q).toBe(400);
    }
  });
});

describe('PATCH and DELETE /api/v1/subscriptions/:id', () => {
  it('changes the url and options, pauses by hand and resumes clearing the pause reason and the failing streak', async () => {
    const s = await create({ queue: 'patched', name: 'p' });
    const res = await api().call('PATCH', `/api/v1/subscriptions/${s.id}`, {
      url: 'https://93.184.216.35/new',
      options: { batchSize: 50, headers: { 'x-api-key': 'k' } },
      state: 'paused',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      url: 'https://93.184.216.35/new',
      state: 'paused',
      pausedReason: 'paused_by_user',
      options: { batchSize: 50, maxInFlight: 16, headers: ['x-api-key'] },
    });
    await db().query(`UPDATE queen.subscriptions SET paused_reason = 'endpoint_failing', failing_since = now() WHERE id = $1`, [s.id]);
    const resumed = await api().call('PATCH', `/api/v1/subscriptions/${s.id}`, { state: 'active' });
    expect(resumed.body).toMatchObject({ state: 'active', pausedReason: null, failingSince: null });
  });

  it('refuses bad changes with 400s and an unknown id with 404', async () => {
    const s = await create({ queue: 'patched-bad', name: 'p', options: { retryBaseMs: 2000 } });
    for (const body of [
      {},
      { state: 'stopped' },
      { options: { subscriptionMode: 'new' } },
      { options: { retryMaxMs: 1000 } },
      { options: { nope: 1 } },
      { url: 'https://127.0.0.1/x' },
      { extra: 1 },
    ]) {
      const res = await api().call('PATCH', `/api/v1/subscriptions/${s.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await api().call('PATCH', '/api/v1/subscriptions/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', { state: 'paused' })).status).toBe(404);
    const after = await api().call('GET', `/api/v1/subscriptions/${s.id}`);
    expect(after.body.options).toMatchObject({ retryBaseMs: 2000, retryMaxMs: 300000 });
  });

  it('deletes the subscription but leaves its group and cursors, and answers 404 the second time', async () => {
    const s = await create({ queue: 'deleted', name: 'gone', consumerGroup: 'stays' });
    await api().pushNumbered('deleted', 'p0', 2);
    await api().popQueue('deleted', { batch: 1, consumerGroup: 'stays', autoAck: true });
    const res = await api().call('DELETE', `/api/v1/subscriptions/${s.id}`);
    expect(res.body).toEqual({ success: true, id: s.id, deleted: true });
    expect((await api().call('DELETE', `/api/v1/subscriptions/${s.id}`)).status).toBe(404);
    const [cursor] = await db().query<{ committed: string }>(`SELECT committed FROM queen.log_consumers WHERE consumer_group = 'stays'`);
    expect(Number(cursor?.committed)).toBe(0);
  });
});

describe("a subscription's consumer group is an ordinary group", () => {
  it('is listed with the consumer groups, and seek moves what its lag counts', async () => {
    const s = await create({ queue: 'seekable', name: 'sk' });
    await api().pushNumbered('seekable', 'p0', 4);
    expect((await api().call('GET', `/api/v1/subscriptions/${s.id}`)).body.lag).toBe(4);
    const groups = await api().call('GET', '/api/v1/consumer-groups?queue=seekable');
    expect(JSON.stringify(groups.body)).toContain('"sk"');
    expect((await api().seek('sk', 'seekable', { toEnd: true })).status).toBe(200);
    expect((await api().call('GET', `/api/v1/subscriptions/${s.id}`)).body.lag).toBe(0);
    expect((await api().seek('sk', 'seekable', { offset: 1, partition: 'p0' })).status).toBe(200);
    expect((await api().call('GET', `/api/v1/subscriptions/${s.id}`)).body.lag).toBe(3);
  });
});
