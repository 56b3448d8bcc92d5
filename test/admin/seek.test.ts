import { describe, expect, it } from 'vitest';
import { offsets, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { partitionRow } from './helpers.js';

const db = useDatabase();
const api = testClient(db);

async function cursor(queue: string, group: string, partition = 'Default') {
  const [row] = await db().query<{ committed: string; batch_end: string | null; batch_retry_count: number; attempt_count: number }>(
    `SELECT c.committed, c.batch_end, c.batch_retry_count, c.attempt_count FROM queen.log_consumers c
       JOIN queen.log_partitions p ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id
      WHERE q.name = $1 AND p.name = $2 AND c.consumer_group = $3`,
    [queue, partition, group],
  );
  return row;
}

describe('seek', () => {
  it('moves a group to the end so it sees only messages pushed afterwards', async () => {
    await api.pushSegments('to-end', [[1, 2], [3]]);
    const res = await api.seek('g', 'to-end', { toEnd: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      consumerGroup: 'g',
      queue: 'to-end',
      partitions: [{ partition: 'Default', committed: 2, nextOffset: 3 }],
    });
    expect((await api.popQueue('to-end', { consumerGroup: 'g', batch: 10 })).status).toBe(204);
    await api.push('to-end', 'Default', [4]);
    expect(offsets((await api.popQueue('to-end', { consumerGroup: 'g', batch: 10 })).body)).toEqual([3]);
  });

  it('replays exactly from the target offset when moved backwards', async () => {
    await api.pushSegments('replay', [[0, 1], [2], [3, 4]]);
    expect(offsets((await api.popQueue('replay', { consumerGroup: 'g', batch: 10, autoAck: true })).body)).toEqual([0, 1, 2, 3, 4]);
    expect((await api.popQueue('replay', { consumerGroup: 'g', batch: 10 })).status).toBe(204);
    await api.seek('g', 'replay', { offset: 1, partition: 'Default' });
    const again = await api.popQueue('replay', { consumerGroup: 'g', batch: 10 });
    expect(offsets(again.body)).toEqual([1, 2, 3, 4]);
    expect(again.body.messages.map((m: { data: unknown }) => m.data)).toEqual([1, 2, 3, 4]);
  });

  it('moves only the named partition on an offset seek', async () => {
    await api.pushSegments('two-parts', [[1, 2]], 'a');
    await api.pushSegments('two-parts', [[1, 2]], 'b');
    await api.seek('g', 'two-parts', { toEnd: true });
    const res = await api.seek('g', 'two-parts', { offset: 0, partition: 'a' });
    expect(res.body.partitions).toEqual([expect.objectContaining({ partition: 'a', committed: -1 })]);
    expect((await cursor('two-parts', 'g', 'a'))!.committed).toBe('-1');
    expect((await cursor('two-parts', 'g', 'b'))!.committed).toBe('1');
  });

  it('finds the first segment created at or after a timestamp', async () => {
    await api.pushSegments('by-time', [[0, 1], [2], [3, 4], [5]]);
    const p = await partitionRow(db(), 'by-time');
    // Segment i is (40 - 10 i) seconds old.
    await db().query(
      `UPDATE queen.log_segments SET created_at = now() - make_interval(secs => 40 - 10 * (SELECT count(*) FROM queen.log_segments s2
          WHERE s2.partition_id = log_segments.partition_id AND s2.base_offset < log_segments.base_offset)) WHERE partition_id = $1`,
      [p.id],
    );
    const [{ ts }] = (await db().query<{ ts: Date }>("SELECT now() - interval '25 seconds' AS ts")) as [{ ts: Date }];
    const res = await api.seek('g', 'by-time', { timestamp: ts.toISOString() });
    expect(res.body.partitions[0].nextOffset).toBe(3);
    expect(offsets((await api.popQueue('by-time', { consumerGroup: 'g', batch: 10 })).body)).toEqual([3, 4, 5]);

    const future = await api.seek('g', 'by-time', { timestamp: new Date(ts.getTime() + 3_600_000).toISOString() });
    expect(future.body.partitions[0].committed).toBe(5);
    const past = await api.seek('g', 'by-time', { timestamp: '2000-01-01T00:00:00Z' });
    expect(past.body.partitions[0].committed).toBe(-1);
  });

  it('creates missing cursor rows, clears the lease and resets the retry and attempt counters', async () => {
    await api.pushSegments('lease-reset', [[1, 2, 3]]);
    const first = await api.popQueue('lease-reset', { consumerGroup: 'g', batch: 2 });
    expect(offsets(first.body)).toEqual([0, 1]);
    await db().query(
      "UPDATE queen.log_consumers SET batch_retry_count = 2, attempt_count = 3 WHERE consumer_group = 'g' AND partition_id = (SELECT id FROM queen.log_partitions WHERE name = 'Default' AND queue_id = (SELECT id FROM queen.queues WHERE name = 'lease-reset'))",
    );
    await api.seek('g', 'lease-reset', { offset: 0, partition: 'Default' });
    expect(await cursor('lease-reset', 'g')).toEqual({ committed: '-1', batch_end: null, batch_retry_count: 0, attempt_count: 0 });
    const again = await api.popQueue('lease-reset', { consumerGroup: 'g', batch: 2 });
    expect(offsets(again.body)).toEqual([0, 1]);

    await api.seek('fresh', 'lease-reset', { toEnd: true });
    expect((await cursor('lease-reset', 'fresh'))!.committed).toBe('2');
  });

  it('clamps an offset to [log_start - 1, last_offset]', async () => {
    await api.pushSegments('clamp', [[1], [2], [3]]);
    expect((await api.seek('g', 'clamp', { offset: 99, partition: 'Default' })).body.partitions[0].committed).toBe(2);
    await db().query("UPDATE queen.log_partitions SET log_start = 2 WHERE queue_id = (SELECT id FROM queen.queues WHERE name = 'clamp')");
    expect((await api.seek('g', 'clamp', { offset: 0, partition: 'Default' })).body.partitions[0].committed).toBe(1);
  });

  it.each([
    [{}, /exactly one of/],
    [{ toEnd: true, offset: 1 }, /exactly one of/],
    [{ toEnd: false }, /exactly one of/],
    [{ timestamp: 'yesterday' }, /timestamp must be an ISO 8601/],
    [{ offset: -1, partition: 'Default' }, /offset must be at least 0/],
    [{ offset: 1.5 }, /offset must be a whole number/],
    [{ toEnd: true, partition: 'Default' }, /partition only goes with offset/],
  ])('refuses the body %j with a 400', async (body, message) => {
    const res = await api.seek('g', 'clamp', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_seek');
    expect(res.body.error).toMatch(message);
  });

  it('answers 404 for a missing queue or partition and writes nothing', async () => {
    expect((await api.seek('g', 'missing', { toEnd: true })).body.code).toBe('queue_not_found');
    const res = await api.seek('ghost', 'clamp', { offset: 0, partition: 'nope' });
    expect(res.body.code).toBe('partition_not_found');
    const [{ n }] = (await db().query<{ n: string }>(
      "SELECT count(*) AS n FROM queen.consumer_subscriptions WHERE consumer_group = 'ghost'",
    )) as [{ n: string }];
    expect(n).toBe('0');
  });
});

describe('consumer groups', () => {
  it('lists each group per queue with its summed lag and the age of its oldest unconsumed message', async () => {
    await api.pushSegments('lagging', [[1, 2]], 'a');
    await api.pushSegments('lagging', [[1, 2, 3]], 'b');
    await api.popQueue('lagging', { consumerGroup: 'slow', batch: 1, autoAck: true }, 'a');
    await api.popQueue('lagging', { consumerGroup: 'slow', batch: 1, autoAck: true }, 'b');
    await db().query(
      "UPDATE queen.log_segments SET created_at = now() - interval '100 seconds' WHERE partition_id IN (SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'lagging')",
    );
    const res = await api.call('GET', '/api/v1/consumer-groups?queue=lagging');
    expect(res.status).toBe(200);
    const slow = res.body.find((g: { name: string }) => g.name === 'slow');
    expect(slow).toMatchObject({ queue: 'lagging', partitions: 2, lag: 3 });
    expect(slow.oldestUnconsumedAgeSeconds).toBeGreaterThanOrEqual(100);
  });

  it('counts partitions a subscribed group has not popped yet from where it would start', async () => {
    await api.pushSegments('unpopped', [[1, 2]], 'a');
    await api.popQueue('unpopped', { consumerGroup: 'everything', autoAck: true }, 'a');
    await api.popQueue('unpopped', { consumerGroup: 'fresh', subscriptionMode: 'new' }, 'a');
    await api.pushSegments('unpopped', [[1, 2, 3]], 'b');
    const res = await api.call('GET', '/api/v1/consumer-groups?queue=unpopped');
    const byName = Object.fromEntries(res.body.map((g: { name: string }) => [g.name, g]));
    expect(byName.everything).toMatchObject({ partitions: 2, lag: 1 + 3, subscriptionMode: 'all' });
    expect(byName.fresh).toMatchObject({ partitions: 2, lag: 3, subscriptionMode: 'new' });
  });

  it('does not count a retention gap as lag', async () => {
    await api.pushSegments('gap', [
      [1, 2],
      [3, 4],
    ]);
    await api.seek('g', 'gap', { offset: 0, partition: 'Default' });
    const p = await partitionRow(db(), 'gap');
    await db().query('DELETE FROM queen.log_segments WHERE partition_id = $1 AND base_offset = 0', [p.id]);
    await db().query('UPDATE queen.log_partitions SET log_start = 2 WHERE id = $1', [p.id]);
    const res = await api.call('GET', '/api/v1/consumer-groups?queue=gap');
    expect(res.body[0]).toMatchObject({ name: 'g', lag: 2 });
    expect((await api.describe('gap')).body.partitions[0].consumerGroups[0]).toMatchObject({ committed: -1, lag: 2 });
  });

  it("deletes a group's cursors and subscription on one queue, then on all queues", async () => {
    await api.pushSegments('del-a', [[1]]);
    await api.pushSegments('del-b', [[1]]);
    await api.popQueue('del-a', { consumerGroup: 'gone', autoAck: true });
    await api.popQueue('del-b', { consumerGroup: 'gone', autoAck: true });
    const one = await api.call('DELETE', '/api/v1/consumer-groups/gone/queues/del-a');
    expect(one.body).toMatchObject({ deleted: true, consumerGroup: 'gone', queue: 'del-a', existed: true, cursors: 1 });
    expect(await cursor('del-a', 'gone')).toBeUndefined();
    expect(await cursor('del-b', 'gone')).toBeDefined();
    // Deleted means starting over: the group reads del-a from the beginning again.
    expect(offsets((await api.popQueue('del-a', { consumerGroup: 'gone' })).body)).toEqual([0]);

    const all = await api.call('DELETE', '/api/v1/consumer-groups/gone');
    expect(all.body).toMatchObject({ existed: true, queue: null, cursors: 2 });
    const [{ n }] = (await db().query<{ n: string }>(
      "SELECT count(*) AS n FROM queen.consumer_subscriptions WHERE consumer_group = 'gone'",
    )) as [{ n: string }];
    expect(n).toBe('0');
    expect((await api.call('DELETE', '/api/v1/consumer-groups/gone')).body).toMatchObject({ deleted: true, existed: false });
  });
});
