// A group whose cursor is below log_start (retention deleted a prefix it never read) reads from the
// first live segment: offsets, lease, attempts and the ack that follows all start at log_start.
import { describe, expect, it } from 'vitest';
import { runRetention } from '../../lib/broker/retention.js';
import { offsets, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor, expireLeases } from './helpers.js';

const db = useDatabase();
const b = testClient(db);

/** Four segments of three messages (offsets 0..11); the first two (0..5) made `seconds` old, then retained. */
async function retainPrefix(queue: string, seconds: number) {
  expect((await b.call('POST', '/api/v1/configure', { queue, options: { retentionEnabled: true, retentionSeconds: 60 } })).status).toBe(
    200,
  );
  for (let s = 0; s < 4; s++) await b.pushNumbered(queue, 'p', 3, undefined, s * 3);
  for (const table of ['log_segments', 'log_txns']) {
    await db().query(
      `UPDATE queen.${table} s SET created_at = s.created_at - make_interval(secs => $2)
         FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
        WHERE s.partition_id = p.id AND q.name = $1 AND s.base_offset < 6`,
      [queue, seconds],
    );
  }
  await runRetention(db());
  const [row] = await db().query<{ log_start: string; txns_start: string }>(
    `SELECT p.log_start, p.txns_start FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1`,
    [queue],
  );
  expect(Number(row!.log_start)).toBe(6);
  return Number(row!.txns_start);
}

describe('a group behind a retention gap', () => {
  it('starts at log_start, leases from there, counts attempts from there, and its ack commits', async () => {
    await retainPrefix('gap', 120);
    const first = await b.pop('queue/gap/partition/p?consumerGroup=late&batch=4');
    expect(offsets(first.body)).toEqual([6, 7, 8, 9]);
    expect(first.body.messages.map((m) => m.attempt)).toEqual([1, 1, 1, 1]);
    expect(await cursor(db(), 'gap', 'p', 'late')).toMatchObject({
      committed: '-1',
      batch_end: '9',
      attempt_offset: '6',
      attempt_count: 1,
    });
    await expireLeases(db(), 'gap', 'late');
    const again = await b.pop('queue/gap/partition/p?consumerGroup=late&batch=4');
    expect(offsets(again.body)).toEqual([6, 7, 8, 9]);
    expect(again.body.messages[0]!.attempt).toBe(2);
    const acked = await b.ackAll(again.body, 'completed', 'late');
    expect(acked.body.every((r: any) => r.success && r.committed)).toBe(true);
    expect(acked.body[3]).toMatchObject({ offset: 9, leaseReleased: true });
    // Deleted messages were never consumed: the lifetime counter holds only the four delivered.
    expect(await cursor(db(), 'gap', 'p', 'late')).toMatchObject({ committed: '9', batch_end: null, total_consumed: '4' });
    expect(offsets((await b.pop('queue/gap/partition/p?consumerGroup=late&batch=10')).body)).toEqual([10, 11]);
  });

  it('answers "Message not found" for an unknown transactionId when the gap also purged the sidecar, and commits the rest', async () => {
    expect(await retainPrefix('purged-gap', 7200)).toBe(6);
    const { body } = await b.pop('queue/purged-gap/partition/p?consumerGroup=late&batch=3');
    expect(offsets(body)).toEqual([6, 7, 8]);
    const res = await b.ackBatch(
      [
        { transactionId: 'never-pushed', partitionId: body.partitionId, leaseId: body.leaseId, status: 'completed' },
        { transactionId: body.messages[2]!.transactionId, partitionId: body.partitionId, leaseId: body.leaseId, status: 'completed' },
      ],
      'late',
    );
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Message not found: /) });
    expect(res.body[1]).toMatchObject({ success: true, offset: 8, committed: true, leaseReleased: true });
    expect(Number((await cursor(db(), 'purged-gap', 'p', 'late')).committed)).toBe(8);
  });

  it('delivers nothing below log_start, even from segment rows still visible under the watermark', async () => {
    for (let s = 0; s < 3; s++) await b.pushNumbered('watermark', 'p', 2, undefined, s * 2);
    await db().query(
      `UPDATE queen.log_partitions p SET log_start = 4 FROM queen.queues q WHERE q.id = p.queue_id AND q.name = 'watermark'`,
    );
    const { body } = await b.pop('queue/watermark/partition/p?consumerGroup=late&batch=10');
    expect(offsets(body)).toEqual([4, 5]);
    expect(body.messages[0]!.attempt).toBe(1);
    expect((await b.ackAll(body, 'completed', 'late')).body.every((r: any) => r.success)).toBe(true);
    expect(Number((await cursor(db(), 'watermark', 'p', 'late')).committed)).toBe(5);
  });
});
