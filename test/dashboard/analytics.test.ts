// GET /api/v1/analytics/* as the Dashboard, Queues, QueueDetail, QueueOperations and System pages
// read them; counts checked against the log, worker figures absent and said to be.
import { beforeAll, describe, expect, it } from 'vitest';
import { rollupMinuteStats } from '../../lib/broker/minute-stats.js';
import { runRetention } from '../../lib/broker/retention.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { letMinutesPass, startStatsAt } from './helpers.js';

const db = useDatabase();
const api = testClient(db);
const other = testClient(db, { as: { tenant: 'other-tenant' } });
const BUCKET = /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/;

// ops.a: 4 then 2 messages two minutes apart, group g consumes 3; ops.b: 1 message, never read;
// ops.old: time retention deletes its 3 messages; the other tenant pushes 9.
beforeAll(async () => {
  await startStatsAt(db(), 20);
  await api.pushNumbered('ops.a', 'p1', 4);
  await api.pushNumbered('ops.b', 'Default', 1);
  await api.configure('ops.old', { retentionEnabled: true, retentionSeconds: 60 });
  await api.pushNumbered('ops.old', 'Default', 3);
  await other.pushNumbered('ops.a', 'p1', 9);
  await letMinutesPass(db(), 6);
  await rollupMinuteStats(db());
  await api.pushNumbered('ops.a', 'p2', 2, (i) => `second-${i}`);
  await api.popQueue('ops.a', { consumerGroup: 'g', batch: 3, autoAck: true }, 'p1');
  await letMinutesPass(db(), 2);
  await runRetention(db());
  await letMinutesPass(db(), 1);
  await rollupMinuteStats(db());
});

const ops = async (query = '') => (await api.call('GET', `/api/v1/analytics/queue-ops${query}`)).body;

describe('GET /api/v1/analytics/queue-ops', () => {
  it("gives one row per queue and minute with activity, oldest first, with Queen's keys", async () => {
    const body = await ops();
    expect(body.bucketMinutes).toBe(1);
    expect(body.queues).toEqual(['ops.a', 'ops.b', 'ops.old']);
    const keys = body.series.map((r: any) => `${r.bucket} ${r.queueName}`);
    expect(keys).toEqual([...keys].sort());
    for (const r of body.series) {
      expect(r.bucket).toMatch(BUCKET);
      for (const k of [
        'pushRequests',
        'popMessages',
        'popEmpty',
        'ackRequests',
        'ackFailed',
        'transactions',
        'popPerSecond',
        'emptyPerSecond',
        'parkedCount',
      ])
        expect(r[k]).toBeNull();
      expect(r.partitionsDeleted).toBe(0);
      expect(typeof r.pushPerSecond).toBe('number');
    }
  });

  it('counts pushes, new partitions and cursor advances per queue and minute as the log has them', async () => {
    const rows = (await ops('?queue=ops.a')).series as any[];
    expect(new Set(rows.map((r) => r.queueName))).toEqual(new Set(['ops.a']));
    const truth = await db().query<{ m: Date; n: string }>(
      `SELECT date_trunc('minute', s.created_at) AS m, sum(s.end_offset - s.base_offset + 1) AS n FROM queen.log_segments s
         JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id
        WHERE q.name = 'ops.a' AND q.tenant_id = 'default' GROUP BY 1 ORDER BY 1`,
    );
    expect(rows.filter((r) => r.pushMessages > 0).map((r) => [r.bucket, r.pushMessages])).toEqual(
      truth.map((t) => [`${t.m.toISOString().slice(0, 16)}:00Z`, Number(t.n)]),
    );
    expect(rows.reduce((n, r) => n + r.partitionsCreated, 0)).toBe(2);
    expect(rows.reduce((n, r) => n + r.ackSuccess, 0)).toBe(3);
    const consumed = rows.find((r) => r.ackSuccess > 0);
    expect(consumed.ackPerSecond).toBe(0.05);
    expect(consumed.partitionCount).toBe(2);
    expect(consumed.maxLagMs).toBeGreaterThan(0);
  });

  it("shows the caller's tenant only", async () => {
    const mine = (await ops('?queue=ops.a')).series.reduce((n: number, r: any) => n + r.pushMessages, 0);
    expect(mine).toBe(6);
    const theirs = (await other.call('GET', '/api/v1/analytics/queue-ops')).body;
    expect(theirs.queues).toEqual(['ops.a']);
    expect(theirs.series.reduce((n: number, r: any) => n + r.pushMessages, 0)).toBe(9);
  });
});

describe('GET /api/v1/analytics/queue-lag', () => {
  it('is a bare array of per-minute lag rows, newest first, for the queues that lagged', async () => {
    const { status, body } = await api.call('GET', '/api/v1/analytics/queue-lag');
    expect(status).toBe(200);
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    const times = body.map((r: any) => r.bucketTime);
    expect(times).toEqual([...times].sort().reverse());
    for (const r of body) {
      expect(r.bucketTime).toMatch(BUCKET);
      expect(r.popCount).toBeNull();
      expect(r.maxLagMs).toBeGreaterThanOrEqual(r.avgLagMs);
    }
    // g waits for offset 3 of ops.a's first segment: at each minute's end, lagging that long.
    const [{ t }] = (await db().query<{ t: Date }>(
      `SELECT s.created_at AS t FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
         JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'ops.a' AND q.tenant_id = 'default' AND p.name = 'p1'`,
    )) as [{ t: Date }];
    const lagged = body.filter((r: any) => r.queueName === 'ops.a' && r.maxLagMs > 0);
    expect(lagged.length).toBeGreaterThan(0);
    for (const r of lagged) expect(Math.abs(r.maxLagMs - (Date.parse(r.bucketTime) + 60_000 - t.getTime()))).toBeLessThanOrEqual(1);
    // Nobody reads ops.b: no position lags on it.
    expect(body.filter((r: any) => r.queueName === 'ops.b').every((r: any) => r.maxLagMs === 0)).toBe(true);
  });
});

describe('GET /api/v1/analytics/retention', () => {
  it('splits what retention deleted by rule, per bucket and in total', async () => {
    const { body } = await api.call('GET', '/api/v1/analytics/retention');
    expect(body.series).toEqual([
      { bucket: expect.stringMatching(BUCKET), retentionMsgs: 3, completedRetentionMsgs: 0, evictionMsgs: 0, totalMsgs: 3, eventCount: 1 },
    ]);
    expect(body.totals).toEqual({ retentionMsgs: 3, completedRetentionMsgs: 0, evictionMsgs: 0, totalMsgs: 3, eventCount: 1 });
    expect((await other.call('GET', '/api/v1/analytics/retention')).body.series).toEqual([]);
  });
});

describe('GET /api/v1/analytics/worker-metrics', () => {
  it('answers 200 with timeSeries and an empty workers list, saying there are no workers', async () => {
    const { status, body } = await api.call('GET', '/api/v1/analytics/worker-metrics?hostname=x&workerId=1');
    expect(status).toBe(200);
    expect(body.workers).toEqual([]);
    expect(body.deployment.workers).toMatch(/no long-lived workers/);
    expect(body.timeSeries.length).toBe(body.pointCount);
    for (const r of body.timeSeries) {
      expect(r.timestamp).toMatch(BUCKET);
      for (const k of [
        'popMessages',
        'popPerSecond',
        'avgEventLoopLagMs',
        'dbConnections',
        'avgFreeSlots',
        'avgJobQueueSize',
        'dbErrors',
        'ackFailed',
      ])
        expect(r[k]).toBeNull();
    }
    expect(body.timeSeries.reduce((n: number, r: any) => n + r.pushMessages, 0)).toBe(4 + 1 + 3 + 2);
    expect(body.timeSeries.reduce((n: number, r: any) => n + r.ackMessages, 0)).toBe(3);
    // Lifetime, from the partitions' offsets and cursors: 10 pushed, 3 consumed; g has 1 + 2 left, ops.b 1.
    expect(body.summary).toMatchObject({ totalPushMessages: 10, totalAckMessages: 3, pendingMessages: 1 + 2 + 1, totalPopMessages: null });
    expect(body.queues.map((q: any) => q.queueName)).toContain('ops.b');
  });
});

describe('the routes of replicas and processes a serverless deployment does not have', () => {
  it('system-metrics and queue-parked-replicas answer empty lists with the window', async () => {
    const to = new Date().toISOString();
    const from = new Date(Date.parse(to) - 6 * 3600_000).toISOString();
    const sys = (await api.call('GET', `/api/v1/analytics/system-metrics?from=${from}&to=${to}`)).body;
    expect(sys).toMatchObject({ replicas: [], replicaCount: 0, pointCount: 0, bucketMinutes: 5, timeRange: { from, to } });
    expect(sys.deployment.kind).toBe('serverless');
    const parked = (await api.call('GET', '/api/v1/analytics/queue-parked-replicas')).body;
    expect(parked).toMatchObject({ series: [], replicas: [], bucketMinutes: 1 });
  });
});

describe('GET /api/v1/analytics/postgres-stats', () => {
  it("shows PostgreSQL's own statistics for the queen schema, numbers as numbers", async () => {
    const { status, body } = await api.call('GET', '/api/v1/analytics/postgres-stats');
    expect(status).toBe(200);
    expect(body.database).toBe((await db().query<{ d: string }>('SELECT current_database() AS d'))[0]!.d);
    const sizes = Object.fromEntries(body.tableSizes.map((t: any) => [t.table, t]));
    expect(sizes.log_segments.totalSizeBytes).toBeGreaterThan(0);
    expect(typeof sizes.log_segments.totalSize).toBe('string');
    for (const key of ['tableCache', 'indexCache', 'deadTuples', 'hotUpdates', 'activeQueries', 'autovacuumStatus', 'bufferUsage'])
      expect(Array.isArray(body[key])).toBe(true);
    expect(body.tableCache.every((t: any) => typeof t.table === 'string' && typeof t.cacheHits === 'number')).toBe(true);
    expect(typeof body.bufferConfig.sharedBuffersSize).toBe('string');
  });
});
