// A pop whose response cannot be built after it took the lease (wrong encryption key, corrupt
// segment) gives the lease back: the next pop gets the same messages at once, and the failed
// pop does not count as a delivery attempt.
import { describe, expect, it } from 'vitest';
import { offsets, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor } from './helpers.js';

const KEY = '5f'.repeat(32);
const WRONG_KEY = 'c3'.repeat(32);

const db = useDatabase();
const right = testClient(db, { config: { encryptionKey: KEY } });
const wrong = testClient(db, { config: { encryptionKey: WRONG_KEY } });

async function sealedQueue(queue: string, count: number) {
  expect((await right.call('POST', '/api/v1/configure', { queue, options: { encryptionEnabled: true } })).status).toBe(200);
  await right.pushNumbered(queue, 'p', count);
}

describe('a pop that fails after taking the lease', () => {
  it('releases the lease on decryption_failed, so the right key gets the same messages at once, first attempt', async () => {
    await sealedQueue('sealed', 3);
    const failed = await wrong.call('GET', '/api/v1/pop/queue/sealed/partition/p?batch=10&consumerGroup=g');
    expect([failed.status, failed.body.code]).toEqual([500, 'decryption_failed']);
    expect(await cursor(db(), 'sealed', 'p', 'g')).toMatchObject({
      committed: '-1',
      batch_end: null,
      worker_id: null,
      lease_expires_at: null,
    });
    const { status, body } = await right.pop('queue/sealed/partition/p?batch=10&consumerGroup=g');
    expect(status).toBe(200);
    expect(offsets(body)).toEqual([0, 1, 2]);
    expect(body.messages.map((m) => [m.data, m.attempt])).toEqual([
      [{ n: 0 }, 1],
      [{ n: 1 }, 1],
      [{ n: 2 }, 1],
    ]);
    expect((await right.ackAll(body, 'completed', 'g')).body.every((r: any) => r.success && r.committed)).toBe(true);
  });

  it('keeps counting real deliveries: a failed pop after an expired lease does not add an attempt', async () => {
    await sealedQueue('sealed-again', 2);
    const first = await right.pop('queue/sealed-again/partition/p?batch=10');
    expect(first.body.messages[0]!.attempt).toBe(1);
    await db().query(`UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE worker_id = $1`, [
      first.body.leaseId,
    ]);
    expect((await wrong.call('GET', '/api/v1/pop/queue/sealed-again/partition/p?batch=10')).status).toBe(500);
    const second = await right.pop('queue/sealed-again/partition/p?batch=10');
    expect(offsets(second.body)).toEqual([0, 1]);
    expect(second.body.messages[0]!.attempt).toBe(2);
  });

  it('puts an autoAck cursor back when the response fails, so nothing is skipped', async () => {
    await sealedQueue('sealed-auto', 2);
    expect((await wrong.call('GET', '/api/v1/pop/queue/sealed-auto/partition/p?batch=10&autoAck=true')).status).toBe(500);
    expect(await cursor(db(), 'sealed-auto', 'p')).toMatchObject({ committed: '-1', total_consumed: '0' });
    const { body } = await right.pop('queue/sealed-auto/partition/p?batch=10&autoAck=true');
    expect(offsets(body)).toEqual([0, 1]);
    expect(body.messages[0]!.attempt).toBe(1);
  });

  it('releases the lease when a segment is corrupt, and delivers once the segment is readable again', async () => {
    await right.pushNumbered('corrupt', 'p', 2);
    const [seg] = await db().query<{ partition_id: string; blob: Uint8Array }>(
      `SELECT s.partition_id, s.blob FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
         JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'corrupt'`,
    );
    await db().query('UPDATE queen.log_segments SET blob = $2 WHERE partition_id = $1', [seg!.partition_id, Uint8Array.of(1, 2, 3, 4)]);
    expect((await right.call('GET', '/api/v1/pop/queue/corrupt/partition/p?batch=10')).status).toBe(500);
    expect(await cursor(db(), 'corrupt', 'p')).toMatchObject({ batch_end: null, worker_id: null });
    await db().query('UPDATE queen.log_segments SET blob = $2 WHERE partition_id = $1', [seg!.partition_id, seg!.blob]);
    const { body } = await right.pop('queue/corrupt/partition/p?batch=10');
    expect(offsets(body)).toEqual([0, 1]);
    expect(body.messages[0]!.attempt).toBe(1);
  });
});
