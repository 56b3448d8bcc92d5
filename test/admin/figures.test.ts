// Queen's resource figures (overview, queue list and detail, namespaces and tasks), each checked
// against what this file pushed, acked, leased and dead-lettered in a tenant of its own.
import { beforeAll, describe, expect, it } from 'vitest';
import { testClient, type PopBody } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { expireLeases } from '../pop/helpers.js';
import { ageQueue, partitionRow } from './helpers.js';

const db = useDatabase();
const api = testClient(db, { as: { tenant: 'figures' } });

// fig.a/p1: 10 messages; queue mode acked 0-2 and leases 3-5; group "bus" consumed all 10.
// fig.a/p2: 4 messages in two segments, read by nobody yet. fig.b/p1: 2 messages, the first
// dead-lettered by queue mode. fig.a is 600 s old, fig.b 400 s: none of it was written in the last 5 minutes.
const expected = {
  a: { total: 14, pending: 4 + 4, processing: 3, completed: 3, failed: null, deadLetter: 0 },
  b: { total: 2, pending: 1, processing: 0, completed: 1, failed: null, deadLetter: 1 },
  p1: { total: 10, pending: 4, processing: 3, completed: 3, failed: null, deadLetter: 0 },
  p2: { total: 4, pending: 4, processing: 0, completed: 0, failed: null, deadLetter: 0 },
};

beforeAll(async () => {
  await api.configure('fig.a', { leaseTime: 3600 });
  await api.configure('fig.b', { retryLimit: 0 });
  await api.pushNumbered('fig.a', 'p1', 10);
  await api.pushNumbered('fig.a', 'p2', 2);
  await api.pushNumbered('fig.a', 'p2', 2, undefined, 2);
  await api.pushNumbered('fig.b', 'p1', 2);
  await api.ackAll((await api.popQueue('fig.a', { batch: 3 }, 'p1')).body as PopBody);
  await api.popQueue('fig.a', { batch: 3 }, 'p1');
  await api.popQueue('fig.a', { batch: 10, consumerGroup: 'bus', autoAck: true }, 'p1');
  await api.ackAll((await api.popQueue('fig.b', { batch: 1 }, 'p1')).body as PopBody, 'failed');
  await ageQueue(db(), 'fig.a', 600);
  await ageQueue(db(), 'fig.b', 400);
});

/** Every leaf of a JSON value that is not null is a number (node-postgres hands int8 back as strings). */
const numbersOnly = (x: unknown): boolean =>
  x === null || typeof x === 'number' || (typeof x === 'object' && Object.values(x as object).every(numbersOnly));

describe('GET /api/v1/resources/overview', () => {
  it("sums the tenant's figures, spreads lag over the backlogged (group, partition) pairs, and counts the ingest of the last 5 minutes", async () => {
    const res = await api.call('GET', '/api/v1/resources/overview');
    expect(res.status).toBe(200);
    const o = res.body;
    expect(o).toMatchObject({
      queues: 2,
      partitions: 3,
      namespaces: 1,
      tasks: 2,
      messages: { total: 16, pending: 9, processing: 3, completed: 4, failed: null, deadLetter: 1 },
      statsAge: 0,
      lifetimePushed: 16,
      timestamp: expect.stringMatching(/Z$/),
    });
    // Backlogs: fig.a/p1 queue mode 7; fig.a/p2 4 for each subscribed group; fig.b/p1 1.
    expect(o.lag.offset).toEqual({ avg: 4, median: 4, min: 1, max: 7 });
    expect(o.lag.time.min).toBeGreaterThanOrEqual(400);
    expect(o.lag.time.min).toBeLessThan(400 + 120);
    expect(o.lag.time.max).toBeGreaterThanOrEqual(600);
    expect(o.lag.time.max).toBeLessThan(600 + 120);
    expect(o.throughput).toEqual({ ingestedPerSecond: 0, processedPerSecond: null });
    expect(numbersOnly(o.messages) && numbersOnly(o.lag) && numbersOnly(o.throughput)).toBe(true);
  });

  it('counts as ingested the messages whose segments were written in the last 5 minutes', async () => {
    const ingest = testClient(db, { as: { tenant: 'figures-ingest' } });
    await ingest.pushNumbered('in', 'a', 3);
    await ingest.pushNumbered('in', 'b', 4);
    const rate = async () => (await ingest.call('GET', '/api/v1/resources/overview')).body.throughput.ingestedPerSecond;
    expect(await rate()).toBe(Math.round((7 / 300) * 100) / 100);
    await ageQueue(db(), 'in', 301);
    await ingest.pushNumbered('in', 'a', 1, (i) => `late-${i}`, 3);
    expect(await rate()).toBe(Math.round((1 / 300) * 100) / 100);
  });

  it('shows another tenant nothing of these figures', async () => {
    const res = await testClient(db, { as: { tenant: 'figures-other' } }).call('GET', '/api/v1/resources/overview');
    expect(res.body).toMatchObject({
      queues: 0,
      partitions: 0,
      messages: { total: 0, pending: 0, processing: 0, completed: 0, deadLetter: 0 },
      lag: { time: { avg: 0, median: 0, min: 0, max: 0 }, offset: { avg: 0, median: 0, min: 0, max: 0 } },
      lifetimePushed: 0,
    });
  });
});

describe('queue list, detail, namespaces and tasks', () => {
  it("lists Queen's messages {total, pending, processing} with pending excluding what is in flight", async () => {
    const res = await api.call('GET', '/api/v1/resources/queues');
    const byName = Object.fromEntries(res.body.queues.map((q: { name: string }) => [q.name, q]));
    const { failed: _f, deadLetter: _d, ...a } = expected.a;
    const { failed: _f2, deadLetter: _d2, ...b } = expected.b;
    expect(byName['fig.a']).toMatchObject({ partitions: 2, messages: a });
    expect(byName['fig.b']).toMatchObject({ partitions: 1, messages: b });
  });

  it('details per-partition stats with oldest and newest message times, and the queue totals', async () => {
    const res = await api.describe('fig.a');
    expect(res.status).toBe(200);
    const [p1, p2] = res.body.partitions;
    expect([p1.name, p1.stats, p2.name, p2.stats]).toEqual(['p1', expected.p1, 'p2', expected.p2]);
    expect(res.body.totals).toEqual(expected.a);
    const times = await db().query<{ oldest: Date; newest: Date }>(
      'SELECT min(created_at) AS oldest, max(created_at) AS newest FROM queen.log_segments WHERE partition_id = $1',
      [(await partitionRow(db(), 'fig.a', 'p2')).id],
    );
    expect([p2.oldestMessage, p2.newestMessage]).toEqual([times[0]!.oldest.toISOString(), times[0]!.newest.toISOString()]);
    expect(p2.oldestMessage < p2.newestMessage).toBe(true);
    expect((await api.describe('fig.b')).body.totals).toEqual(expected.b);
  });

  it('counts an expired lease as pending, not processing', async () => {
    await expireLeases(db(), 'fig.a');
    expect((await api.describe('fig.a')).body.partitions[0].stats).toEqual({ ...expected.p1, pending: 7, processing: 0 });
  });

  it('groups by namespace and task with a count of queues and their names', async () => {
    const ns = (await api.call('GET', '/api/v1/resources/namespaces')).body.namespaces;
    expect(ns).toEqual([
      { namespace: 'fig', queues: 2, queueNames: ['fig.a', 'fig.b'], partitions: 3, messages: { total: 16, pending: 12, processing: 0 } },
    ]);
    const tasks = (await api.call('GET', '/api/v1/resources/tasks')).body.tasks;
    expect(tasks.map((t: { task: string; queues: number }) => [t.task, t.queues])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });
});
