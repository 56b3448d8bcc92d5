// Every queue option (docs/api.md#queue-options) set through /configure changes what push, pop and
// ack do.
import { describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { backdate } from './helpers.js';

const db = useDatabase();
const api = testClient(db, { config: { encryptionKey: 'cd'.repeat(32) } });

type Msg = { transactionId: string; partitionId: string; leaseId: string; offset: number; data: unknown };
const popOne = async (queue: string, group = 'g') => {
  const res = await api.popQueue(queue, { consumerGroup: group });
  return res.status === 204 ? null : (res.body.messages[0] as Msg);
};
const fail = (m: Msg, status = 'failed', group = 'g') =>
  api.ack({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status, consumerGroup: group, error: 'nope' });
const dlqCount = async (queue: string) => (await api.call('GET', `/api/v1/dlq?queue=${queue}`)).body.total as number;
const committed = async (queue: string, group = 'g') =>
  Number(
    (
      await db().query<{ committed: string }>(
        `SELECT c.committed FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
           JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 AND c.consumer_group = $2`,
        [queue, group],
      )
    )[0]!.committed,
  );

describe('configured options take effect', () => {
  it('leaseTime sets how long a pop leases', async () => {
    await api.configure('lease', { leaseTime: 7 });
    await api.push('lease', 'Default', [1]);
    await popOne('lease');
    const [row] = await db().query<{ secs: string }>(
      "SELECT extract(epoch FROM lease_expires_at - lease_acquired_at)::int AS secs FROM queen.log_consumers WHERE consumer_group = 'g' AND partition_id IN (SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'lease')",
    );
    expect(Number(row!.secs)).toBe(7);
  });

  it('retryLimit N allows N + 1 deliveries before the message is dead-lettered', async () => {
    await api.configure('limit', { retryLimit: 1 });
    await api.push('limit', 'Default', ['x', 'y']);
    const first = (await popOne('limit'))!;
    expect((await fail(first)).body[0]!.dlq).toBe(false);
    const second = (await popOne('limit'))!;
    expect(second.offset).toBe(0);
    expect((await fail(second)).body[0]!.dlq).toBe(true);
    expect(await dlqCount('limit')).toBe(1);
    expect((await popOne('limit'))!.offset).toBe(1);
  });

  it('retryDelay withholds a failed message from the group until it elapses', async () => {
    await api.configure('delay', { retryDelay: 600_000 });
    await api.push('delay', 'Default', ['x']);
    await fail((await popOne('delay'))!);
    expect(await popOne('delay')).toBeNull();
    await db().query(
      "UPDATE queen.log_consumers SET retry_not_before = now() - interval '1 second' WHERE consumer_group = 'g' AND retry_not_before IS NOT NULL",
    );
    expect((await popOne('delay'))!.offset).toBe(0);
  });

  it('deadLetterQueue false skips a dlq-acked message instead of keeping it', async () => {
    await api.configure('no-dlq', { deadLetterQueue: false });
    await api.push('no-dlq', 'Default', ['x', 'y']);
    const res = await fail((await popOne('no-dlq'))!, 'dlq');
    expect(res.body[0]).toMatchObject({ success: true, dlq: false, skipped: true });
    expect(await dlqCount('no-dlq')).toBe(0);
    expect(await committed('no-dlq')).toBe(0);
  });

  it('dlqAfterMaxRetries false skips a message whose budget ran out', async () => {
    await api.configure('no-dlq-retries', { dlqAfterMaxRetries: false, retryLimit: 0 });
    await api.push('no-dlq-retries', 'Default', ['x', 'y']);
    const res = await fail((await popOne('no-dlq-retries'))!);
    expect(res.body[0]).toMatchObject({ dlq: false, skipped: true });
    expect(await dlqCount('no-dlq-retries')).toBe(0);
    expect((await popOne('no-dlq-retries'))!.offset).toBe(1);
  });

  it('delayedProcessing delivers only messages at least that old', async () => {
    await api.configure('delayed', { delayedProcessing: 60 });
    await api.push('delayed', 'Default', ['x']);
    expect(await popOne('delayed')).toBeNull();
    await backdate(db(), 'delayed', 120);
    expect((await popOne('delayed'))!.data).toBe('x');
  });

  it('windowBuffer holds a partition until its newest message is that old', async () => {
    await api.configure('window', { windowBuffer: 60 });
    await api.push('window', 'Default', ['x']);
    await backdate(db(), 'window', 120);
    await api.push('window', 'Default', ['y']);
    expect(await popOne('window')).toBeNull();
    await backdate(db(), 'window', 120);
    expect((await popOne('window'))!.data).toBe('x');
  });

  it('dedupWindowSeconds 0 stops rejecting repeats but still writes the hash sidecar', async () => {
    await api.push('dedup-on', 'Default', [1], ['same']);
    expect((await api.push('dedup-on', 'Default', [2], ['same']))[0]!.status).toBe('duplicate');
    await api.configure('dedup-off', { dedupWindowSeconds: 0 });
    await api.push('dedup-off', 'Default', [1], ['same']);
    expect((await api.push('dedup-off', 'Default', [2], ['same']))[0]!.status).toBe('queued');
    const [row] = await db().query<{ n: string }>(
      "SELECT count(*) AS n FROM queen.log_txns t JOIN queen.log_partitions p ON p.id = t.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'dedup-off'",
    );
    expect(Number(row!.n)).toBe(2);
  });

  it('encryptionEnabled stores payloads encrypted and pops them decrypted', async () => {
    await api.configure('secret', { encryptionEnabled: true });
    await api.push('secret', 'Default', [{ pin: '987654' }]);
    const [seg] = await db().query<{ blob: Uint8Array }>(
      "SELECT s.blob FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'secret'",
    );
    const { decodeSegment } = await import('../../lib/codec/segment.js');
    const [frame] = decodeSegment(seg!.blob, 0, 0, 0, 1);
    expect(frame!.encrypted).toBe(true);
    expect(new TextDecoder().decode(frame!.payload)).not.toContain('987654');
    expect((await popOne('secret'))!.data).toEqual({ pin: '987654' });
  });
});
