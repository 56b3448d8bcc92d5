// GET /api/v1/status* as Queen's dashboard reads them, every figure checked against the log tables.
import { beforeAll, describe, expect, it } from 'vitest';
import { rollupMinuteStats } from '../../lib/broker/minute-stats.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { letMinutesPass, startStatsAt } from './helpers.js';

const db = useDatabase();
const api = testClient(db);
const other = testClient(db, { as: { tenant: 'other-tenant' } });

const minuteKey = (d: Date) => `${d.toISOString().slice(0, 16)}:00Z`;
const scalar = async (sql: string, params: unknown[] = []) => Number(Object.values((await db().query(sql, params))[0]!)[0]);

let pushedAt: Date;
let lastPushAt: Date;

// shop.orders: partitions eu (5 messages) and us (3); group billing consumed 3 of eu, and holds a
// live lease on 2 of us. shop.payments (queue mode): one dead letter, one message left.
beforeAll(async () => {
  await startStatsAt(db(), 30);
  await api.configure('shop.orders', { leaseTime: 300 });
  await api.pushNumbered('shop.orders', 'eu', 5);
  await api.pushNumbered('shop.orders', 'us', 3);
  await api.configure('shop.payments', { retryLimit: 0 });
  await api.pushNumbered('shop.payments', 'Default', 2);
  await other.pushNumbered('other.secret', 'Default', 7);
  await letMinutesPass(db(), 12);
  await rollupMinuteStats(db());
  await api.popQueue('shop.orders', { consumerGroup: 'billing', batch: 3, autoAck: true }, 'eu');
  const m = (await api.popQueue('shop.payments', { batch: 1 })).body.messages[0]!;
  await api.ack({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    leaseId: m.leaseId,
    status: 'failed',
    error: 'card declined',
  });
  await letMinutesPass(db(), 3);
  await rollupMinuteStats(db());
  await letMinutesPass(db(), 2);
  await rollupMinuteStats(db());
  expect((await api.popQueue('shop.orders', { consumerGroup: 'billing', batch: 2 }, 'us')).status).toBe(200);
  [{ first: pushedAt, last: lastPushAt }] = (await db().query<{ first: Date; last: Date }>(
    `SELECT min(s.created_at) AS first, max(s.created_at) AS last FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
       JOIN queen.queues q ON q.id = p.queue_id WHERE q.name IN ('shop.orders', 'shop.payments')`,
  )) as [{ first: Date; last: Date }];
});

describe('GET /api/v1/status', () => {
  it('answers the fields the Dashboard, Analytics and DeadLetter pages read, numbers as numbers', async () => {
    const res = await api.call('GET', '/api/v1/status');
    expect(res.status).toBe(200);
    const s = res.body;
    expect(s.bucketMinutes).toBe(1);
    expect(s.workers).toEqual([]);
    expect(s.deployment.kind).toBe('serverless');
    expect(s.messages.batchEfficiency).toEqual({ push: expect.any(Number), pop: null, ack: null });
    for (const row of s.throughput) {
      expect(row.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
      for (const k of ['ingested', 'processed', 'ingestedPerSecond', 'processedPerSecond', 'avgLagMs', 'maxLagMs', 'dlqCount'])
        expect(typeof row[k]).toBe('number');
      for (const k of ['popMessages', 'popPerSecond', 'avgEventLoopLagMs', 'queenCpuUserPct', 'dbPoolSize']) expect(row[k]).toBeNull();
    }
    expect(s.throughput.map((r: any) => r.timestamp)).toEqual([...s.throughput.map((r: any) => r.timestamp)].sort().reverse());
  });

  it('counts pushes and consumption in the minutes they happened, from the log', async () => {
    const { body } = await api.call('GET', '/api/v1/status');
    const byMinute = new Map<string, any>(body.throughput.map((r: any) => [r.timestamp, r]));
    const truth = await db().query<{ m: Date; n: string }>(
      `SELECT date_trunc('minute', s.created_at) AS m, sum(s.end_offset - s.base_offset + 1) AS n
         FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id
        WHERE q.tenant_id = 'default' GROUP BY 1`,
    );
    expect(truth.length).toBeGreaterThan(0);
    for (const t of truth) expect(byMinute.get(minuteKey(t.m))?.ingested).toBe(Number(t.n));
    expect(body.throughput.reduce((n: number, r: any) => n + r.ingested, 0)).toBe(5 + 3 + 2);
    // billing's 3 (autoAck) and the dead-lettered payment, sampled 2 minutes after the first sample.
    expect(body.throughput.filter((r: any) => r.processed > 0).map((r: any) => r.processed)).toEqual([4]);
    const row = body.throughput.find((r: any) => r.ingested > 0);
    expect(row.ingestedPerSecond).toBe(Math.round((row.ingested / 60) * 100) / 100);
    expect(body.messages.batchEfficiency.push).toBe(Math.round((10 / 3) * 100) / 100);
  });

  it('shows the lag of the lagging groups at the end of each minute, from the oldest unconsumed segment', async () => {
    const { body } = await api.call('GET', '/api/v1/status');
    const last = body.throughput[0];
    const end = Date.parse(last.timestamp) + 60_000;
    // billing lags on eu (from offset 3) and us (from 0), queue mode on payments (from 1): the
    // oldest is the first segment pushed, the mean lies between the first and the last.
    expect(Math.abs(last.maxLagMs - (end - pushedAt.getTime()))).toBeLessThanOrEqual(1);
    expect(last.avgLagMs).toBeLessThanOrEqual(last.maxLagMs);
    expect(last.avgLagMs).toBeGreaterThanOrEqual(end - lastPushAt.getTime() - 1);
  });

  it('gives depth, leases and dead letters as they are now', async () => {
    const { body } = await api.call('GET', '/api/v1/status');
    const dead = await scalar(
      "SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant_id = 'default'",
    );
    expect(dead).toBe(1);
    // held 10; pending: eu 2, us 3 - 2 leased, payments 1; processing 2; completed: eu 3.
    expect(body.messages).toMatchObject({ total: 10, pending: 2 + 1 + 1, processing: 2, completed: 3, failed: null, deadLetter: 1 });
    expect(body.leases).toEqual({ active: 1, partitionsWithLeases: 1, totalBatchSize: 2, totalAcked: 0 });
    expect(body.deadLetterQueue).toEqual({ totalMessages: 1, affectedPartitions: 1, topErrors: [{ error: 'card declined', count: 1 }] });
    expect(body.queues.map((q: any) => [q.name, q.partitions, q.totalConsumed])).toEqual([
      ['shop.orders', 2, 3],
      ['shop.payments', 1, 1],
    ]);
  });

  it("scopes everything to the queue, namespace or task asked for, and to the caller's tenant", async () => {
    const one = (await api.call('GET', '/api/v1/status?queue=shop.payments')).body;
    expect(one.queues.map((q: any) => q.name)).toEqual(['shop.payments']);
    expect(one.messages.total).toBe(2);
    expect(one.throughput.reduce((n: number, r: any) => n + r.ingested, 0)).toBe(2);
    expect((await api.call('GET', '/api/v1/status?task=orders')).body.messages.total).toBe(8);
    const theirs = await other.call('GET', '/api/v1/status');
    expect(theirs.body.messages.total).toBe(7);
    expect(theirs.text).not.toContain('shop.');
  });

  it('refuses a window that ends before it starts or is not a time, and writes nothing', async () => {
    for (const q of ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from=yesterday']) {
      const res = await api.call('GET', `/api/v1/status?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_query');
    }
  });

  it("picks Queen's bucket widths for 6 h, 24 h and 7 d windows", async () => {
    const now = Date.now();
    for (const [hours, width] of [
      [6, 5],
      [24, 15],
      [24 * 7, 60],
      [24 * 30, 360],
    ] as const) {
      const q = `from=${new Date(now - hours * 3600_000).toISOString()}&to=${new Date(now).toISOString()}`;
      const { body } = await api.call('GET', `/api/v1/status?${q}`);
      expect([hours, body.bucketMinutes]).toEqual([hours, width]);
      for (const r of body.throughput) expect(Date.parse(r.timestamp) % (width * 60_000)).toBe(0);
      expect(body.throughput.reduce((n: number, r: any) => n + r.ingested, 0)).toBe(10);
    }
  });
});

describe('GET /api/v1/status/queues', () => {
  it("lists the tenant's queues newest first with Queen's message counts (pending includes leased)", async () => {
    const { status, body } = await api.call('GET', '/api/v1/status/queues?limit=500');
    expect(status).toBe(200);
    expect(body.pagination).toEqual({ limit: 500, offset: 0 });
    expect(body.queues.map((q: any) => q.name)).toEqual(['shop.payments', 'shop.orders']);
    expect(body.queues[1]).toMatchObject({
      namespace: 'shop',
      task: 'orders',
      partitions: 2,
      messages: { total: 8, pending: 2 + 3, processing: 2, completed: 3 },
    });
    expect((await api.call('GET', '/api/v1/status/queues?limit=1&offset=1')).body.queues.map((q: any) => q.name)).toEqual(['shop.orders']);
    expect((await api.call('GET', '/api/v1/status/queues?namespace=nope')).body.queues).toEqual([]);
    expect((await api.call('GET', '/api/v1/status/queues?limit=0')).status).toBe(400);
  });
});

describe('GET /api/v1/status/queues/:queue', () => {
  it('details the queue, its configuration and each partition as QueueDetail reads them', async () => {
    const { status, body } = await api.call('GET', '/api/v1/status/queues/shop.orders');
    expect(status).toBe(200);
    expect(body.queue).toMatchObject({
      name: 'shop.orders',
      namespace: 'shop',
      task: 'orders',
      priority: 0,
      config: { leaseTime: 300, retryLimit: 3, deadLetterQueue: true, ttl: 0, maxQueueSize: 0 },
    });
    const [eu, us] = body.partitions;
    expect(eu).toMatchObject({ name: 'eu', lastOffset: 4, logStart: 0, cursor: { totalConsumed: 3, batchesConsumed: null } });
    expect(eu.stats).toEqual({ total: 5, pending: 2, processing: 0, completed: 3, failed: null, deadLetter: 0 });
    expect(us.stats).toEqual({ total: 3, pending: 1, processing: 2, completed: 0, failed: null, deadLetter: 0 });
    expect(eu.messages).toEqual(eu.stats);
    const seg = async (partition: string, offset: number) =>
      (
        await db().query<{ t: Date }>(
          `SELECT queen.segment_time_at(p.id, $2) AS t FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'shop.orders' AND p.name = $1`,
          [partition, offset],
        )
      )[0]!.t.toISOString();
    expect(eu.oldestMessage).toBe(await seg('eu', 3));
    expect(eu.newestMessage).toBe(await seg('eu', 4));
    expect(us.lastActivity).not.toBeNull();
    expect(body.totals).toMatchObject({
      total: 8,
      pending: 3,
      processing: 2,
      completed: 3,
      messages: { total: 8, pending: 3, processing: 2, completed: 3, deadLetter: 0 },
    });
  });

  it('is a 404 for a queue the tenant does not have, even when another tenant has it', async () => {
    expect((await api.call('GET', '/api/v1/status/queues/other.secret')).status).toBe(404);
    expect((await other.call('GET', '/api/v1/status/queues/shop.orders')).status).toBe(404);
    expect((await other.call('GET', '/api/v1/status/queues/other.secret')).body.totals.total).toBe(7);
  });
});

describe('GET /api/v1/status/analytics', () => {
  it('counts pushed messages per interval bucket, null where the rollup has no record', async () => {
    const from = new Date(Date.now() - 60 * 60_000).toISOString();
    const { body } = await api.call('GET', `/api/v1/status/analytics?interval=minute&from=${from}`);
    expect(body.interval).toBe('minute');
    const points = body.dataPoints as { timestamp: string; messages: number | null }[];
    expect(points.reduce((n, p) => n + (p.messages ?? 0), 0)).toBe(10);
    expect(points[0]!.messages).toBeNull();
    expect(points.filter((p) => p.messages !== null).length).toBeGreaterThan(20);
    expect((await api.call('GET', '/api/v1/status/analytics?interval=week')).body.interval).toBe('hour');
  });

  // 80 years of minutes is 42 million points: the fuzz saw that answer 500 after two minutes.
  it("refuses a window of more than a week of minutes' points, and answers one of exactly that", async () => {
    for (const q of [
      'from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&interval=minute',
      'from=1990-01-01T00:00:00Z&interval=day',
      'to=2100-01-01T00:00:00Z&from=1900-01-01&interval=hour',
    ]) {
      const res = await api.call('GET', `/api/v1/status/analytics?${q}`);
      expect([q, res.status, res.body.code]).toEqual([q, 400, 'invalid_query']);
      expect(res.body.error).toMatch(/at most 10080 points/);
    }
    const week = await api.call('GET', '/api/v1/status/analytics?from=2026-01-01T00:00:00Z&to=2026-01-08T00:00:00Z&interval=minute');
    expect([week.status, week.body.dataPoints.length]).toEqual([200, 7 * 24 * 60 + 1]);
  });
});
