// Consumer-group routes in the shapes Queen's clients and dashboard read (get_consumer_groups_v4,
// lagging partitions, group detail, subscription update, per-partition seek, delete), with every
// figure checked against what the test itself pushed and acked.
import { beforeAll, describe, expect, it } from 'vitest';
import { offsets, testClient, type PopBody } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { ageQueue, backdate, partitionRow } from './helpers.js';

const db = useDatabase();
const api = testClient(db);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const AGE = 1000;

// Queue "cg": p1 holds 5 messages, p2 3, p3 none. Group "fast" consumed everything; "slow" acked
// 2 of p1 and holds a lease on p2's first message; "fresh" subscribed as new and has no cursor.
// Every message is AGE seconds old.
let slowLease: PopBody;

beforeAll(async () => {
  // A long lease, so "slow" still holds it however long the file takes.
  await api.configure('cg', { leaseTime: 3600 });
  await api.pushNumbered('cg', 'p1', 5);
  await api.pushNumbered('cg', 'p2', 3);
  await db().query(`INSERT INTO queen.log_partitions (queue_id, name) SELECT id, 'p3' FROM queen.queues WHERE name = 'cg'`);
  for (const p of ['p1', 'p2']) await api.popQueue('cg', { consumerGroup: 'fast', batch: 10, autoAck: true }, p);
  const slow = (await api.popQueue('cg', { consumerGroup: 'slow', batch: 2 }, 'p1')).body as PopBody;
  await api.ackAll(slow, 'completed', 'slow');
  slowLease = (await api.popQueue('cg', { consumerGroup: 'slow', batch: 1 }, 'p2')).body as PopBody;
  await api.popQueue('cg', { consumerGroup: 'fresh', subscriptionMode: 'new' });
  await backdate(db(), 'cg', AGE);
});

const groupsOf = async (queue: string) => {
  const res = await api.call('GET', `/api/v1/consumer-groups?queue=${queue}`);
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body as any[]).map((g) => [g.name, g]));
};

describe('GET /api/v1/consumer-groups', () => {
  it("answers a bare array, one element per (group, queue), in Queen's keys with true figures", async () => {
    const res = await api.call('GET', '/api/v1/consumer-groups');
    expect(Array.isArray(res.body)).toBe(true);
    const g = await groupsOf('cg');
    // slow: p1 lag 5 - 2, p2 lag 3 (its lease is not consumption), p3 nothing.
    expect(g.slow).toEqual({
      name: 'slow',
      topics: ['cg'],
      queueName: 'cg',
      members: 3,
      partitionsWithLag: 2,
      totalLag: 3 + 3,
      maxTimeLag: expect.any(Number),
      state: 'Lagging',
      subscriptionMode: 'all',
      subscriptionTimestamp: null,
      subscriptionCreatedAt: expect.stringMatching(ISO_MS),
      queue: 'cg',
      partitions: 3,
      lag: 6,
      leasedPartitions: 1,
      oldestUnconsumedAgeSeconds: g.slow.maxTimeLag,
      subscribedAt: g.slow.subscriptionCreatedAt,
    });
    expect(g.slow.maxTimeLag).toBeGreaterThanOrEqual(AGE);
    expect(g.slow.maxTimeLag).toBeLessThan(AGE + 300);
    expect(g.fast).toMatchObject({ members: 3, partitionsWithLag: 0, totalLag: 0, maxTimeLag: 0, state: 'Stable' });
    // fresh subscribed after every message was pushed: nothing to read, nothing read.
    expect(g.fresh).toMatchObject({
      members: 3,
      totalLag: 0,
      state: 'Dead',
      subscriptionMode: 'new',
      subscriptionTimestamp: expect.stringMatching(ISO_MS),
    });
  });

  it('counts a group with a young backlog as Stable once it has consumed, Dead before', async () => {
    await api.pushNumbered('cg-young', 'a', 3);
    await api.popQueue('cg-young', { consumerGroup: 'ate-one', batch: 1, autoAck: true });
    await api.popQueue('cg-young', { consumerGroup: 'idle', batch: 1 });
    const g = await groupsOf('cg-young');
    expect(g['ate-one']).toMatchObject({ state: 'Stable', totalLag: 2 });
    expect(g.idle).toMatchObject({ state: 'Dead', totalLag: 3, leasedPartitions: 1 });
  });
});

describe('GET /api/v1/consumer-groups/lagging', () => {
  it('lists (group, partition) pairs whose oldest unconsumed message is older than minLagSeconds, oldest first', async () => {
    await api.pushNumbered('cg-lag', 'x', 2);
    await api.popQueue('cg-lag', { consumerGroup: 'older', batch: 1, autoAck: true });
    await backdate(db(), 'cg-lag', 5000, 's.base_offset = 0');
    const res = await api.call('GET', '/api/v1/consumer-groups/lagging?minLagSeconds=600');
    expect(res.status).toBe(200);
    const rows = (res.body as any[]).filter((r) => r.queue_name === 'cg' || r.queue_name === 'cg-lag');
    expect(rows.map((r) => [r.consumer_group, r.queue_name, r.partition_name, r.offset_lag])).toEqual([
      // cg-lag's one segment holds both messages, so the oldest unconsumed is 5000 s old.
      ['older', 'cg-lag', 'x', 1],
      ['slow', 'cg', 'p1', 3],
      ['slow', 'cg', 'p2', 3],
    ]);
    const p2 = await partitionRow(db(), 'cg', 'p2');
    expect(rows[2]).toEqual({
      consumer_group: 'slow',
      queue_name: 'cg',
      partition_name: 'p2',
      partition_id: p2.id,
      worker_id: slowLease.leaseId,
      offset_lag: 3,
      time_lag_seconds: expect.any(Number),
      lag_hours: Math.round((rows[2].time_lag_seconds / 3600) * 100) / 100,
      oldest_unconsumed_at: expect.stringMatching(ISO_MS),
      last_consumed_at: null,
    });
    expect(rows[0].time_lag_seconds).toBeGreaterThanOrEqual(5000);
    const above = await api.call('GET', `/api/v1/consumer-groups/lagging?minLagSeconds=${rows[1].time_lag_seconds + 60}`);
    expect((above.body as any[]).map((r) => r.queue_name)).toEqual(['cg-lag']);
  });

  it('defaults minLagSeconds to an hour and refuses a non-number', async () => {
    const res = await api.call('GET', '/api/v1/consumer-groups/lagging');
    expect((res.body as any[]).map((r) => r.queue_name)).toEqual(['cg-lag']);
    expect((await api.call('GET', '/api/v1/consumer-groups/lagging?minLagSeconds=soon')).status).toBe(400);
  });
});

describe('GET /api/v1/consumer-groups/:group', () => {
  it("answers the group's partitions keyed by queue name, {} for an unknown group", async () => {
    const res = await api.call('GET', '/api/v1/consumer-groups/slow');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['cg']);
    expect(res.body.cg.partitions.map((p: any) => [p.partition, p.offsetLag, p.totalConsumed, p.leaseActive, p.workerId])).toEqual([
      ['p1', 3, 2, false, null],
      ['p2', 3, 0, true, slowLease.leaseId],
      ['p3', 0, 0, false, null],
    ]);
    expect(res.body.cg.partitions[1]).toMatchObject({ lastConsumedAt: null, committed: -1, leaseExpiresAt: expect.stringMatching(ISO_MS) });
    expect(res.body.cg.partitions[0].timeLagSeconds).toBeGreaterThanOrEqual(AGE);
    expect((await api.call('GET', '/api/v1/consumer-groups/nobody')).body).toEqual({});
    expect((await testClient(db, { as: { tenant: 'acme' } }).call('GET', '/api/v1/consumer-groups/slow')).body).toEqual({});
  });
});

describe('POST /api/v1/consumer-groups/:group/subscription', () => {
  it('moves the start of partitions the group has no cursor on, keeps its cursors, and lets a wildcard pop find old partitions', async () => {
    await api.pushNumbered('cg-sub', 'a', 2);
    await api.pushNumbered('cg-sub', 'b', 2);
    await api.pushNumbered('cg-sub-2', 'c', 3);
    await ageQueue(db(), 'cg-sub', 7200);
    await ageQueue(db(), 'cg-sub-2', 7200);
    // A "new" subscriber sees nothing of the old backlog, on either queue.
    expect((await api.popQueue('cg-sub', { consumerGroup: 'late', subscriptionMode: 'new', batch: 10 })).status).toBe(204);
    await api.popQueue('cg-sub-2', { consumerGroup: 'late', subscriptionMode: 'new' }, 'c');
    await api.seek('late', 'cg-sub-2', { offset: 1, partition: 'c' });

    const ts = new Date(Date.now() - 3 * 3600_000).toISOString();
    const res = await api.call('POST', '/api/v1/consumer-groups/late/subscription', { subscriptionTimestamp: ts });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, consumerGroup: 'late', newTimestamp: ts, rowsUpdated: 2 });
    expect((await groupsOf('cg-sub')).late).toMatchObject({ subscriptionMode: 'timestamp', subscriptionTimestamp: ts, totalLag: 4 });

    const pop = await api.popQueue('cg-sub', { consumerGroup: 'late', batch: 10, partitions: 10 });
    expect(pop.status).toBe(200);
    expect(pop.body.messages.map((m: any) => `${m.partition}:${m.offset}`).sort()).toEqual(['a:0', 'a:1', 'b:0', 'b:1']);
    // The cursor it already had on cg-sub-2 stays where the seek put it.
    expect(offsets((await api.popQueue('cg-sub-2', { consumerGroup: 'late', batch: 10 }, 'c')).body)).toEqual([1, 2]);
  });

  it('answers rowsUpdated 0 for a group with no subscription, and 400 for a bad body or queue mode', async () => {
    expect(
      (await api.call('POST', '/api/v1/consumer-groups/ghost/subscription', { subscriptionTimestamp: '2026-01-01T00:00:00Z' })).body
        .rowsUpdated,
    ).toBe(0);
    for (const body of [{}, { subscriptionTimestamp: 'yesterday' }, { subscriptionTimestamp: 5 }, '{oops']) {
      expect((await api.call('POST', '/api/v1/consumer-groups/late/subscription', body)).status).toBe(400);
    }
    expect(
      (await api.call('POST', '/api/v1/consumer-groups/__QUEUE_MODE__/subscription', { subscriptionTimestamp: '2026-01-01T00:00:00Z' }))
        .status,
    ).toBe(400);
  });
});

describe('POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek', () => {
  it("moves one partition's cursor to its newest message, clears its lease, and leaves the others", async () => {
    await api.pushNumbered('cg-skip', 'a', 3);
    await api.pushNumbered('cg-skip', 'b', 2);
    const held = (await api.popQueue('cg-skip', { consumerGroup: 'g', batch: 1 }, 'a')).body as PopBody;
    const res = await api.call('POST', '/api/v1/consumer-groups/g/queues/cg-skip/partitions/a/seek');
    expect(res.status).toBe(200);
    const [{ t }] = (await db().query<{ t: Date }>(`SELECT max(s.created_at) AS t FROM queen.log_segments s WHERE s.partition_id = $1`, [
      held.partitionId,
    ])) as [{ t: Date }];
    expect(res.body).toMatchObject({
      success: true,
      consumerGroup: 'g',
      queueName: 'cg-skip',
      partitionName: 'a',
      updated: true,
      cursorMovedTo: t.toISOString(),
      partitions: [{ partition: 'a', committed: 2, nextOffset: 3 }],
    });
    expect((await api.popQueue('cg-skip', { consumerGroup: 'g', batch: 10 }, 'a')).status).toBe(204);
    expect(offsets((await api.popQueue('cg-skip', { consumerGroup: 'g', batch: 10 }, 'b')).body)).toEqual([0, 1]);
    // The dashboard posts no body, the Go admin {}; anything else is ignored, as Queen does.
    for (const body of [{}, '{not json']) {
      expect((await api.call('POST', '/api/v1/consumer-groups/g/queues/cg-skip/partitions/b/seek', body)).status).toBe(200);
    }
  });

  it('answers 404 for an unknown partition or queue and writes nothing', async () => {
    const res = await api.call('POST', '/api/v1/consumer-groups/nobody/queues/cg-skip/partitions/zz/seek');
    expect([res.status, res.body.code]).toEqual([404, 'partition_not_found']);
    expect((await api.call('POST', '/api/v1/consumer-groups/nobody/queues/missing/partitions/a/seek')).body.code).toBe('queue_not_found');
    expect(await db().query("SELECT 1 FROM queen.consumer_subscriptions WHERE consumer_group = 'nobody'")).toEqual([]);
  });

  it("adds Queen's keys to the queue seek", async () => {
    const res = await api.seek('g', 'cg-skip', { timestamp: '2000-01-01T00:00:00Z' });
    expect(res.body).toMatchObject({
      success: true,
      consumerGroup: 'g',
      queueName: 'cg-skip',
      seekToEnd: false,
      targetTimestamp: '2000-01-01T00:00:00.000Z',
      partitionsUpdated: 2,
    });
    expect((await api.seek('g', 'cg-skip', { toEnd: true })).body).toMatchObject({
      seekToEnd: true,
      targetTimestamp: null,
      partitionsUpdated: 2,
    });
  });
});

describe('DELETE /api/v1/consumer-groups/:group[/queues/:queue]', () => {
  it('keeps the subscription with deleteMetadata=false: the group starts over from where it subscribed, old partitions included', async () => {
    await api.pushNumbered('cg-keep', 'a', 2);
    await api.pushNumbered('cg-keep', 'b', 2);
    await ageQueue(db(), 'cg-keep', 3600);
    const all = { batch: 100, partitions: 10, autoAck: true };
    expect((await api.popQueue('cg-keep', { consumerGroup: 'k', ...all })).body.messages).toHaveLength(4);
    expect((await api.popQueue('cg-keep', { consumerGroup: 'k', ...all })).status).toBe(204);

    const res = await api.call('DELETE', '/api/v1/consumer-groups/k/queues/cg-keep?deleteMetadata=false');
    expect(res.body).toMatchObject({
      success: true,
      consumerGroup: 'k',
      queueName: 'cg-keep',
      deletedPartitions: 2,
      metadataDeleted: false,
    });
    expect(await db().query("SELECT 1 FROM queen.consumer_subscriptions WHERE consumer_group = 'k'")).toHaveLength(1);
    expect((await api.popQueue('cg-keep', { consumerGroup: 'k', ...all })).body.messages).toHaveLength(4);

    const gone = await api.call('DELETE', '/api/v1/consumer-groups/k');
    expect(gone.body).toMatchObject({ success: true, consumerGroup: 'k', deletedPartitions: 2, metadataDeleted: true });
    expect(gone.body).not.toHaveProperty('queueName');
    expect(await db().query("SELECT 1 FROM queen.consumer_subscriptions WHERE consumer_group = 'k'")).toEqual([]);
  });

  it("keeps a new subscriber's start: after a delete without metadata it does not read what predates it", async () => {
    await api.pushNumbered('cg-keep-new', 'a', 2);
    await ageQueue(db(), 'cg-keep-new', 600);
    expect((await api.popQueue('cg-keep-new', { consumerGroup: 'n', subscriptionMode: 'new' })).status).toBe(204);
    await api.push('cg-keep-new', 'a', ['after']);
    expect(offsets((await api.popQueue('cg-keep-new', { consumerGroup: 'n', autoAck: true, batch: 10 })).body)).toEqual([2]);
    await api.call('DELETE', '/api/v1/consumer-groups/n?deleteMetadata=0');
    expect(offsets((await api.popQueue('cg-keep-new', { consumerGroup: 'n', batch: 10 })).body)).toEqual([2]);
  });

  it('refuses a deleteMetadata that is not a boolean', async () => {
    expect((await api.call('DELETE', '/api/v1/consumer-groups/k?deleteMetadata=maybe')).status).toBe(400);
  });
});

describe('POST /api/v1/stats/refresh', () => {
  it('answers success and says there is nothing to refresh, for admins only', async () => {
    const res = await api.call('POST', '/api/v1/stats/refresh', {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, skipped: true, reason: expect.stringMatching(/computed/) });
    expect(res.body).not.toHaveProperty('error');
    expect((await testClient(db, { as: { role: 'read-write' } }).call('POST', '/api/v1/stats/refresh')).status).toBe(403);
  });
});
