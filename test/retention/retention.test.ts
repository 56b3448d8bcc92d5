import { describe, expect, it } from 'vitest';
import { runScheduledRetention } from '../../functions/retention.js';
import { runRetention } from '../../lib/broker/retention.js';
import { backdate, partitionRow, segmentBases } from '../admin/helpers.js';
import { offsets, testClient, type Msg } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

const db = useDatabase();
const api = testClient(db);

const queueReport = (report: Awaited<ReturnType<typeof runRetention>>, queue: string) => report.queues.find((q) => q.queue === queue);

describe('time retention', () => {
  it('deletes the expired prefix of whole segments, advances log_start, and is idempotent', async () => {
    await api.configure('timed', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('timed', [[0, 1], [2], [3, 4]]);
    await backdate(db(), 'timed', 120, 's.base_offset < 3');
    const report = await runRetention(db());
    expect(queueReport(report, 'timed')).toMatchObject({ tenant: 'default', partitions: 1, segmentsDeleted: 2, messagesDeleted: 3 });
    expect(await segmentBases(db(), 'timed')).toEqual([3]);
    expect(await partitionRow(db(), 'timed')).toMatchObject({ logStart: 3, lastOffset: 4 });
    expect(queueReport(await runRetention(db()), 'timed')).toBeUndefined();
    expect(await segmentBases(db(), 'timed')).toEqual([3]);
  });

  it('deletes only a contiguous prefix: an old segment behind a young one stays', async () => {
    await api.configure('prefix', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('prefix', [[0], [1], [2]]);
    await backdate(db(), 'prefix', 120, 's.base_offset IN (0, 2)');
    await runRetention(db());
    expect(await segmentBases(db(), 'prefix')).toEqual([1, 2]);
    expect((await partitionRow(db(), 'prefix')).logStart).toBe(1);
  });

  it('moves log_start to last_offset + 1 when every segment expired', async () => {
    await api.configure('emptied', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('emptied', [[0, 1], [2]]);
    await backdate(db(), 'emptied', 120);
    await runRetention(db());
    expect(await segmentBases(db(), 'emptied')).toEqual([]);
    expect(await partitionRow(db(), 'emptied')).toMatchObject({ logStart: 3, lastOffset: 2 });
    expect(offsets((await api.push('emptied', 'Default', ['next']).then(() => api.popQueue('emptied', { batch: 10 }))).body)).toEqual([3]);
  });

  it('lets a pop skip the gap retention left instead of stalling, and does not count the gap as lag', async () => {
    await api.configure('gap', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('gap', [[0, 1], [2], [3, 4]]);
    expect((await api.popQueue('gap', { consumerGroup: 'late', batch: 1, autoAck: true })).status).toBe(200);
    await backdate(db(), 'gap', 120, 's.base_offset < 3');
    await runRetention(db());
    const groups = await api.call('GET', '/api/v1/consumer-groups?queue=gap');
    expect(groups.body[0]).toMatchObject({ name: 'late', lag: 2 });
    expect(offsets((await api.popQueue('gap', { consumerGroup: 'late', batch: 10 })).body)).toEqual([3, 4]);
  });

  it('deletes a long expired prefix in several bounded statements within one run', async () => {
    await api.configure('chunked', { retentionEnabled: true, retentionSeconds: 60, dedupWindowSeconds: 60 });
    await api.pushSegments('chunked', [[0], [1, 2], [3], [4], [5], [6]]);
    await backdate(db(), 'chunked', 1000, 's.base_offset < 6');
    const report = await runRetention(db(), { segmentsPerStatement: 2 });
    expect(queueReport(report, 'chunked')).toMatchObject({ segmentsDeleted: 5, messagesDeleted: 6, sidecarRowsPurged: 5 });
    expect(await segmentBases(db(), 'chunked')).toEqual([6]);
    expect(await partitionRow(db(), 'chunked')).toMatchObject({ logStart: 6, txnsStart: 6 });
  });

  it('does nothing while retentionEnabled is false, whatever retentionSeconds says', async () => {
    await api.configure('disabled', { retentionSeconds: 60 });
    await api.pushSegments('disabled', [[0], [1]]);
    await backdate(db(), 'disabled', 120);
    await runRetention(db());
    expect(await segmentBases(db(), 'disabled')).toEqual([0, 1]);
  });
});

describe('completed retention', () => {
  it('never deletes a segment a subscribed group has not committed past', async () => {
    await api.configure('done', { completedRetentionSeconds: 60 });
    await api.pushSegments('done', [[0, 1], [2], [3, 4]]);
    await api.popQueue('done', { consumerGroup: 'fast', batch: 3, autoAck: true });
    await api.popQueue('done', { consumerGroup: 'slow', batch: 1, autoAck: true });
    await backdate(db(), 'done', 120);

    await runRetention(db());
    expect(await segmentBases(db(), 'done')).toEqual([0, 2, 3]);

    await api.popQueue('done', { consumerGroup: 'slow', batch: 2, autoAck: true });
    const report = await runRetention(db());
    expect(queueReport(report, 'done')).toMatchObject({ segmentsDeleted: 2, messagesDeleted: 3 });
    expect(await segmentBases(db(), 'done')).toEqual([3]);
    expect((await partitionRow(db(), 'done')).logStart).toBe(3);
  });

  it('keeps segments younger than completedRetentionSeconds even when every group is past them', async () => {
    await api.configure('young', { completedRetentionSeconds: 3600 });
    await api.pushSegments('young', [[0], [1]]);
    await api.popQueue('young', { consumerGroup: 'g', batch: 2, autoAck: true });
    await backdate(db(), 'young', 120);
    await runRetention(db());
    expect(await segmentBases(db(), 'young')).toEqual([0, 1]);
  });

  it('keeps a whole partition that a subscribed group has never read', async () => {
    await api.configure('unread', { completedRetentionSeconds: 60 });
    await api.pushSegments('unread', [[0], [1]], 'x');
    await api.pushSegments('unread', [[0], [1]], 'y');
    for (const p of ['x', 'y']) await api.popQueue('unread', { consumerGroup: 'reader', batch: 2, autoAck: true }, p);
    await api.popQueue('unread', { consumerGroup: 'partial', batch: 2, autoAck: true }, 'x');
    await backdate(db(), 'unread', 120);
    await runRetention(db());
    expect(await segmentBases(db(), 'unread', 'x')).toEqual([]);
    expect(await segmentBases(db(), 'unread', 'y')).toEqual([0, 1]);
  });

  it('deletes nothing while no group has subscribed to the queue', async () => {
    await api.configure('nobody', { completedRetentionSeconds: 60 });
    await api.pushSegments('nobody', [[0], [1]]);
    await backdate(db(), 'nobody', 120);
    await runRetention(db());
    expect(await segmentBases(db(), 'nobody')).toEqual([0, 1]);
  });
});

describe('sidecar purge', () => {
  const txnsBases = async (queue: string) =>
    (
      await db().query<{ base_offset: string }>(
        `SELECT t.base_offset FROM queen.log_txns t JOIN queen.log_partitions p ON p.id = t.partition_id
           JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 ORDER BY 1`,
        [queue],
      )
    ).map((r) => Number(r.base_offset));

  it('purges sidecar rows older than GREATEST(dedup window, completed retention, 900 s) and advances txns_start', async () => {
    await api.configure('sidecar', { dedupWindowSeconds: 60 });
    await api.pushSegments('sidecar', [[0, 1], [2], [3]]);
    await backdate(db(), 'sidecar', 1000, 's.base_offset < 2');
    await backdate(db(), 'sidecar', 500, 's.base_offset = 2');
    const report = await runRetention(db());
    expect(queueReport(report, 'sidecar')).toMatchObject({ sidecarRowsPurged: 1, segmentsDeleted: 0 });
    expect(await txnsBases('sidecar')).toEqual([2, 3]);
    expect(await segmentBases(db(), 'sidecar')).toEqual([0, 2, 3]);
    expect((await partitionRow(db(), 'sidecar')).txnsStart).toBe(2);
  });

  it('keeps sidecar rows for the longer of the dedup window and completed retention', async () => {
    await api.configure('long-window', { dedupWindowSeconds: 7200, completedRetentionSeconds: 60 });
    await api.pushSegments('long-window', [[0], [1]]);
    await backdate(db(), 'long-window', 3600, 's.base_offset = 0');
    await runRetention(db());
    expect(await txnsBases('long-window')).toEqual([0, 1]);
    await backdate(db(), 'long-window', 3700, 's.base_offset = 0');
    await runRetention(db());
    expect(await txnsBases('long-window')).toEqual([1]);
  });
});

describe('the scheduled entry point', () => {
  it('logs one line with the per-queue counts and returns the report', async () => {
    await api.configure('logged', { retentionEnabled: true, retentionSeconds: 60 });
    await api.pushSegments('logged', [[0]]);
    await backdate(db(), 'logged', 120);
    const lines: string[] = [];
    const report = await runScheduledRetention(db(), (line) => lines.push(line));
    expect(queueReport(report, 'logged')).toMatchObject({ segmentsDeleted: 1, messagesDeleted: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^retention: .*"queue":"logged"/);
  });

  it('logs nothing when the run deleted nothing', async () => {
    await api.configure('quiet', { retentionEnabled: true, retentionSeconds: 3600 });
    await api.pushSegments('quiet', [[0]]);
    await runRetention(db()); // whatever earlier tests left due
    const lines: string[] = [];
    const report = await runScheduledRetention(db(), (line) => lines.push(line));
    expect(queueReport(report, 'quiet')).toBeUndefined();
    expect(report.segmentsDeleted + report.sidecarRowsPurged).toBe(0);
    expect(lines).toEqual([]);
  });
});

describe.skipIf(testMode() !== 'pg')('overlapping runs', () => {
  it('delete every expired segment exactly once between them', async () => {
    await api.configure('overlap', { retentionEnabled: true, retentionSeconds: 60 });
    for (let p = 0; p < 20; p++) await api.pushSegments('overlap', [[0, 1], [2], [3]], `p${p}`);
    await backdate(db(), 'overlap', 120, 's.base_offset < 3');
    const [a, b] = await Promise.all([runRetention(db()), runRetention(db())]);
    const deleted = (queueReport(a, 'overlap')?.messagesDeleted ?? 0) + (queueReport(b, 'overlap')?.messagesDeleted ?? 0);
    expect(deleted).toBe(20 * 3);
    const [{ n }] = (await db().query<{ n: string }>(
      "SELECT count(*) AS n FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'overlap' AND p.log_start = 3",
    )) as [{ n: string }];
    expect(Number(n)).toBe(20);
  });

  it('keep log_start on the first live segment while pushes land during the runs', async () => {
    await api.configure('busy', { retentionEnabled: true, retentionSeconds: 60 });
    for (let i = 0; i < 10; i++) await api.push('busy', 'Default', [i, i]);
    await backdate(db(), 'busy', 120);
    const pushes = Array.from({ length: 30 }, (_, i) => api.push('busy', 'Default', [`new-${i}`]));
    const runs = Array.from({ length: 3 }, () => runRetention(db()));
    const reports = await Promise.all(runs);
    await Promise.all(pushes);
    expect(reports.reduce((n, r) => n + (queueReport(r, 'busy')?.messagesDeleted ?? 0), 0)).toBe(20);
    const bases = await segmentBases(db(), 'busy');
    expect(bases).toHaveLength(30);
    expect(bases).toEqual(Array.from({ length: 30 }, (_, i) => 20 + i));
    expect(await partitionRow(db(), 'busy')).toMatchObject({ logStart: 20, lastOffset: 49 });
  });
});

describe('acks after the sidecar purge', () => {
  // docs/storage.md#how-an-ack-finds-its-message: a purged hash is looked up by decoding the
  // segments in range, so the ack lands on exactly its message; an id that is not there is not
  // acked and the message comes back when the lease expires. Never an ack of the wrong offset,
  // never a loss.
  it('resolve a purged hash by its segment, and an unknown one as not acked so the message is redelivered', async () => {
    await api.configure('purged-ack', { dedupWindowSeconds: 60, leaseTime: 30 });
    await api.pushSegments('purged-ack', [['a', 'b'], ['c']]);
    const popped = await api.popQueue('purged-ack', { consumerGroup: 'g', batch: 2 });
    const [m0, m1] = popped.body.messages as [Msg, Msg];
    await backdate(db(), 'purged-ack', 1000);
    await runRetention(db());
    expect((await partitionRow(db(), 'purged-ack')).txnsStart).toBe(3);

    const unknown = await api.ack({
      transactionId: 'never-pushed',
      partitionId: m0.partitionId,
      leaseId: m0.leaseId,
      status: 'completed',
      consumerGroup: 'g',
    });
    expect(unknown.body[0]).toMatchObject({ success: false });
    await db().query("UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE consumer_group = 'g'");
    const again = await api.popQueue('purged-ack', { consumerGroup: 'g', batch: 1 });
    expect(again.body.messages[0]).toMatchObject({ offset: 0, transactionId: m0.transactionId });

    const ack = await api.ack({
      transactionId: m0.transactionId,
      partitionId: m0.partitionId,
      leaseId: again.body.messages[0]!.leaseId,
      status: 'completed',
      consumerGroup: 'g',
    });
    expect(ack.body[0]).toMatchObject({ success: true, offset: 0 });
    const next = await api.popQueue('purged-ack', { consumerGroup: 'g', batch: 1 });
    expect(next.body.messages[0]).toMatchObject({ offset: 1, transactionId: m1.transactionId });
  });
});
