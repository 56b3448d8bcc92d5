import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rollupMinuteStats } from '../../lib/broker/minute-stats.js';
import { runRetention } from '../../lib/broker/retention.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { awayFromMinuteEnd, moveSegments, segmentsPerMinute, startStatsAt, statsRows } from './helpers.js';

const db = useDatabase();
const api = testClient(db);

beforeAll(async () => {
  await startStatsAt(db(), 30);
});
beforeEach(() => awayFromMinuteEnd(db()));

describe('pushes per minute', () => {
  it('are recomputed from segment created_at for every closed minute, messages, segments and bytes', async () => {
    await api.pushSegments('roll-push', [[1, 2, 3], [4]], 'a');
    await api.pushSegments('roll-push', [[5, 6]], 'b');
    await api.pushSegments('roll-push', [[7]], 'a');
    await moveSegments(db(), 'roll-push', 5, 10, 's.base_offset < 3');
    await moveSegments(db(), 'roll-push', 3, 20, 's.base_offset >= 3');
    await rollupMinuteStats(db());
    const truth = await segmentsPerMinute(db(), 'roll-push');
    expect(truth.map((t) => t.minutesAgo)).toEqual([5, 3]);
    const rows = (await statsRows(db(), 'roll-push')).filter((r) => r.pushed_messages > 0);
    expect(rows.map((r) => [r.minutesAgo, r.pushed_messages, r.pushed_segments, r.pushed_bytes])).toEqual(
      truth.map((t) => [t.minutesAgo, t.messages, t.segments, t.bytes]),
    );
  });

  it('are not counted for the open minute until it closes', async () => {
    await api.pushSegments('roll-open', [[1]]);
    await rollupMinuteStats(db());
    expect((await statsRows(db(), 'roll-open')).reduce((n, r) => n + r.pushed_messages, 0)).toBe(0);
  });

  it('keep their count when retention deletes the segments before the next recompute', async () => {
    await api.configure('roll-kept', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('roll-kept', [[1, 2], [3]]);
    await moveSegments(db(), 'roll-kept', 2);
    await rollupMinuteStats(db());
    await runRetention(db());
    expect(await segmentsPerMinute(db(), 'roll-kept')).toEqual([]);
    await rollupMinuteStats(db());
    const pushed = (await statsRows(db(), 'roll-kept')).filter((r) => r.pushed_messages > 0);
    expect(pushed.map((r) => [r.minutesAgo, r.pushed_messages, r.pushed_segments])).toEqual([[2, 3, 2]]);
  });
});

describe('gauges', () => {
  it('are sampled when they change, with the consumption since the previous sample', async () => {
    await api.pushSegments('roll-gauge', [[1, 2, 3, 4]]);
    await rollupMinuteStats(db());
    await rollupMinuteStats(db());
    let sampled = (await statsRows(db(), 'roll-gauge')).filter((r) => r.sampled);
    expect(sampled).toHaveLength(1);
    // A queue created after the rollup began: its first sample's consumption is all it ever had.
    expect(sampled[0]).toMatchObject({
      minutesAgo: 0,
      partitions: 1,
      held: 4,
      lag_messages: 0,
      lagging_pairs: 0,
      consumed_total: 0,
      consumed: 0,
    });

    await api.popQueue('roll-gauge', { consumerGroup: 'g', batch: 3, autoAck: true });
    const leased = await api.popQueue('roll-gauge', { batch: 2 });
    expect(leased.status).toBe(200);
    await db().query(
      `UPDATE queen.queue_minute_stats m SET bucket = m.bucket - interval '1 minute' FROM queen.queues q
        WHERE q.id = m.queue_id AND q.name = 'roll-gauge'`,
    );
    await rollupMinuteStats(db());
    sampled = (await statsRows(db(), 'roll-gauge')).filter((r) => r.sampled);
    expect(sampled.map((r) => r.minutesAgo)).toEqual([1, 0]);
    // Group g is one behind, queue mode has 4 leased (its lag counts them too).
    expect(sampled[1]).toMatchObject({ held: 4, lag_messages: 1 + 4, lagging_pairs: 2, in_flight: 2, consumed_total: 3, consumed: 3 });
  });

  it('record the oldest unconsumed time of the lagging positions', async () => {
    await api.pushSegments('roll-age', [[1], [2]]);
    await moveSegments(db(), 'roll-age', 10, 0, 's.base_offset = 0');
    await moveSegments(db(), 'roll-age', 4, 0, 's.base_offset = 1');
    await api.popQueue('roll-age', { consumerGroup: 'fast', batch: 1, autoAck: true });
    await api.popQueue('roll-age', { consumerGroup: 'slow', batch: 1, autoAck: false });
    await rollupMinuteStats(db());
    const [row] = await db().query<{ oldest: Date; mean: Date; t10: Date; t4: Date }>(
      `SELECT m.oldest_unconsumed_at AS oldest, m.mean_unconsumed_at AS mean,
              date_trunc('minute', now()) - interval '10 minutes' AS t10, date_trunc('minute', now()) - interval '4 minutes' AS t4
         FROM queen.queue_minute_stats m JOIN queen.queues q ON q.id = m.queue_id
        WHERE q.name = 'roll-age' AND m.sampled_at IS NOT NULL`,
    );
    // fast waits for offset 1 (4 min old); slow holds a lease on offset 0 (10 min old).
    expect(row!.oldest.getTime()).toBe(row!.t10.getTime());
    expect(row!.mean.getTime()).toBe((row!.t10.getTime() + row!.t4.getTime()) / 2);
  });
});

describe('partitions and dead letters per minute', () => {
  // Minutes since the previous run are recomputed (plus three): these fall inside.
  it('count new partitions by created_at and dead letters by failed_at', async () => {
    await api.pushSegments('roll-dlq', [[1, 2]], 'x');
    await api.pushSegments('roll-dlq', [[3]], 'y');
    const popped = await api.popQueue('roll-dlq', { consumerGroup: 'g', batch: 2 }, 'x');
    await api.ackAll(popped.body, 'dlq', 'g');
    await db().query(
      `UPDATE queen.log_partitions p SET created_at = date_trunc('minute', now()) - interval '2 minutes' FROM queen.queues q
        WHERE q.id = p.queue_id AND q.name = 'roll-dlq'`,
    );
    await db().query(
      `UPDATE queen.log_dlq d SET failed_at = date_trunc('minute', now()) - interval '1 minute' FROM queen.log_partitions p, queen.queues q
        WHERE p.id = d.partition_id AND q.id = p.queue_id AND q.name = 'roll-dlq'`,
    );
    await rollupMinuteStats(db());
    const rows = await statsRows(db(), 'roll-dlq');
    expect(rows.filter((r) => r.partitions_created > 0).map((r) => [r.minutesAgo, r.partitions_created])).toEqual([[2, 2]]);
    expect(rows.filter((r) => r.dlq_added > 0).map((r) => [r.minutesAgo, r.dlq_added])).toEqual([[1, 1]]);
  });
});

describe('retention by rule', () => {
  it('adds the messages each rule deleted to the current minute, and the retention report says the same', async () => {
    await api.configure('roll-time', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('roll-time', [[1, 2], [3]]);
    await moveSegments(db(), 'roll-time', 5);
    await api.configure('roll-done', { completedRetentionSeconds: 60 });
    await api.pushSegments('roll-done', [[1], [2, 3, 4]]);
    await api.popQueue('roll-done', { consumerGroup: 'g', batch: 4, autoAck: true });
    await moveSegments(db(), 'roll-done', 5);
    await api.configure('roll-evict', { maxWaitTimeSeconds: 60 });
    await api.pushSegments('roll-evict', [[1], [2]], 'p');
    await api.pushSegments('roll-evict', [[3]], 'q');
    await moveSegments(db(), 'roll-evict', 5);

    const report = await runRetention(db());
    const byQueue = Object.fromEntries(report.queues.map((q) => [q.queue, q]));
    expect(byQueue['roll-time']).toMatchObject({
      messagesDeleted: 3,
      retentionMessages: 3,
      completedRetentionMessages: 0,
      evictionMessages: 0,
    });
    expect(byQueue['roll-done']).toMatchObject({
      messagesDeleted: 4,
      retentionMessages: 0,
      completedRetentionMessages: 4,
      evictionMessages: 0,
    });
    expect(byQueue['roll-evict']).toMatchObject({
      partitions: 2,
      messagesDeleted: 3,
      retentionMessages: 0,
      completedRetentionMessages: 0,
      evictionMessages: 3,
    });

    const current = async (queue: string) => (await statsRows(db(), queue)).find((r) => r.minutesAgo === 0)!;
    expect(await current('roll-time')).toMatchObject({
      retention_messages: 3,
      completed_retention_messages: 0,
      eviction_messages: 0,
      retention_events: 1,
    });
    expect(await current('roll-done')).toMatchObject({
      retention_messages: 0,
      completed_retention_messages: 4,
      eviction_messages: 0,
      retention_events: 1,
    });
    expect(await current('roll-evict')).toMatchObject({
      retention_messages: 0,
      completed_retention_messages: 0,
      eviction_messages: 3,
      retention_events: 2,
    });
  });
});

describe('clean-up', () => {
  it('removes rows older than seven days and leaves the rest', async () => {
    await api.pushSegments('roll-old', [[1]]);
    await rollupMinuteStats(db());
    const [{ id }] = (await db().query<{ id: string }>("SELECT id FROM queen.queues WHERE name = 'roll-old'")) as [{ id: string }];
    await db().query(
      `INSERT INTO queen.queue_minute_stats (queue_id, bucket, pushed_messages) VALUES
         ($1, date_trunc('minute', now()) - interval '8 days', 5), ($1, date_trunc('minute', now()) - interval '6 days', 7)`,
      [id],
    );
    const report = await rollupMinuteStats(db());
    expect(report.removed).toBeGreaterThanOrEqual(1);
    const rows = await statsRows(db(), 'roll-old');
    expect(rows.find((r) => r.pushed_messages === 5)).toBeUndefined();
    expect(rows.filter((r) => r.pushed_messages === 7).map((r) => r.minutesAgo)).toEqual([6 * 24 * 60]);
  });
});

describe('a failing rollup', () => {
  it('does not stop retention: segments are deleted, then the run reports the failure', async () => {
    await api.configure('roll-broken', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('roll-broken', [[1], [2]]);
    await moveSegments(db(), 'roll-broken', 5);
    await db().query('ALTER FUNCTION queen.rollup_minute_stats(interval) RENAME TO rollup_minute_stats_hidden');
    try {
      await expect(runRetention(db())).rejects.toThrow(/rollup_minute_stats/);
    } finally {
      await db().query('ALTER FUNCTION queen.rollup_minute_stats_hidden(interval) RENAME TO rollup_minute_stats');
    }
    expect(await segmentsPerMinute(db(), 'roll-broken')).toEqual([]);
  });
});
