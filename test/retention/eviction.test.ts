import { describe, expect, it } from 'vitest';
import { runRetention } from '../../lib/broker/retention.js';
import { backdate, partitionRow, segmentBases } from '../admin/helpers.js';
import { offsets, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db);

// Queen's maxWaitTimeSeconds evicts messages that waited longer than that; here retention deletes
// the prefix of segments older than it (the pop side skips them in the meantime).
describe('maxWaitTimeSeconds eviction', () => {
  it('deletes the prefix of segments older than maxWaitTimeSeconds, unconsumed or not, without retentionEnabled', async () => {
    await api.configure('evict', { maxWaitTimeSeconds: 10 });
    await api.pushSegments('evict', [[0, 1], [2], [3]]);
    await api.popQueue('evict', { consumerGroup: 'reader', batch: 1, autoAck: true });
    await backdate(db(), 'evict', 15, 's.base_offset < 3');
    const report = await runRetention(db());
    expect(report.queues.find((q) => q.queue === 'evict')).toMatchObject({ segmentsDeleted: 2, messagesDeleted: 3, evictionMessages: 3 });
    expect(await segmentBases(db(), 'evict')).toEqual([3]);
    expect((await partitionRow(db(), 'evict')).logStart).toBe(3);
    expect(offsets((await api.popQueue('evict', { consumerGroup: 'reader', batch: 10 })).body)).toEqual([3]);
  });

  it('keeps segments younger than maxWaitTimeSeconds, and everything while it is 0', async () => {
    await api.configure('evict-young', { maxWaitTimeSeconds: 3600 });
    await api.configure('evict-off', { retentionEnabled: false });
    for (const q of ['evict-young', 'evict-off']) {
      await api.pushSegments(q, [[0], [1]]);
      await backdate(db(), q, 600);
    }
    await runRetention(db());
    expect(await segmentBases(db(), 'evict-young')).toEqual([0, 1]);
    expect(await segmentBases(db(), 'evict-off')).toEqual([0, 1]);
  });

  it('counts a segment every group is past for completed retention rather than eviction', async () => {
    await api.configure('evict-done', { maxWaitTimeSeconds: 10, completedRetentionSeconds: 10 });
    await api.pushSegments('evict-done', [[0], [1, 2]]);
    await api.popQueue('evict-done', { consumerGroup: 'g', batch: 1, autoAck: true });
    await backdate(db(), 'evict-done', 60);
    const report = await runRetention(db());
    expect(report.queues.find((q) => q.queue === 'evict-done')).toMatchObject({
      messagesDeleted: 3,
      completedRetentionMessages: 1,
      evictionMessages: 2,
    });
  });
});
