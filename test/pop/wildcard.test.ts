import { describe, expect, it } from 'vitest';
import { offsets, testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { cursor, wildcardPopReads } from './helpers.js';

const db = useDatabase();
const b = testClient(db);

// Pretend time passed: partitions were written long ago and the group last scanned recently.
async function age(queue: string) {
  await db().query(
    `UPDATE queen.log_partitions p SET last_write_at = now() - interval '1 day' FROM queen.queues q WHERE q.id = p.queue_id AND q.name = $1`,
    [queue],
  );
}

describe('wildcard pop', () => {
  it('still finds an old backlog the group left behind, long after the partition was written', async () => {
    await b.pushNumbered('old', 'a', 4);
    const first = await b.pop('queue/old?batch=2');
    await b.ackAll(first.body);
    await age('old');
    expect(offsets((await b.pop('queue/old?batch=10')).body)).toEqual([2, 3]);
  });

  it('finds a partition written after the group caught up even when the group stayed away longer than the slack', async () => {
    await b.pushNumbered('idle', 'a', 1);
    await b.ackAll((await b.pop('queue/idle')).body);
    expect((await b.pop('queue/idle')).status).toBe(204);
    await b.pushNumbered('idle', 'a', 1, undefined, 1);
    await db().query(`UPDATE queen.consumer_subscriptions SET scanned_at = now() - interval '1 hour'`);
    await age('idle');
    await db().query(`UPDATE queen.log_partitions SET last_write_at = now() - interval '30 minutes' WHERE name = 'a'`);
    expect(offsets((await b.pop('queue/idle')).body)).toEqual([1]);
  });

  it('gives a new group every old partition from the beginning', async () => {
    for (const p of ['x', 'y', 'z']) await b.pushNumbered('history', p, 1);
    await age('history');
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const { status, body } = await b.pop('queue/history?consumerGroup=newcomer');
      if (status === 204) break;
      seen.add(body.partition);
    }
    expect(seen).toEqual(new Set(['x', 'y', 'z']));
  });

  it('flags partitions it saw with a backlog but did not claim, so a later pop finds them after they age', async () => {
    for (const p of ['p1', 'p2', 'p3']) await b.pushNumbered('flagged', p, 1);
    const { body } = await b.pop('queue/flagged?consumerGroup=g');
    await b.ackAll(body, 'completed', 'g');
    await age('flagged');
    const rest = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = await b.pop('queue/flagged?consumerGroup=g');
      if (r.status === 204) break;
      rest.add(r.body.partition);
      await b.ackAll(r.body, 'completed', 'g');
    }
    expect(rest.size).toBe(2);
    expect(rest.has(body.partition)).toBe(false);
    for (const p of ['p1', 'p2', 'p3']) expect((await cursor(db(), 'flagged', p, 'g')).pending).toBe(false);
  });

  it('finds a backlog again after a cursor is moved backwards (a seek) on an idle partition', async () => {
    await b.pushNumbered('rewind', 'a', 2);
    await b.ackAll((await b.pop('queue/rewind?batch=2')).body);
    expect((await b.pop('queue/rewind')).status).toBe(204);
    await age('rewind');
    await db().query(`UPDATE queen.log_consumers SET committed = -1 WHERE queue_id = (SELECT id FROM queen.queues WHERE name = 'rewind')`);
    expect(offsets((await b.pop('queue/rewind?batch=5')).body)).toEqual([0, 1]);
  });

  it('costs the partitions written since the last scan, not the ones written in the last minutes', async () => {
    // The shape, small: every partition written moments ago and consumed, then one more message.
    for (let i = 0; i < 60; i++) await b.pushNumbered('busy', `p${i}`, 1);
    for (;;) {
      const r = await b.pop('queue/busy?batch=100&partitions=100');
      if (r.status === 204) break;
      await b.ackAll(r.body);
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect((await b.pop('queue/busy')).status).toBe(204);
    await b.pushNumbered('busy', 'p41', 1, undefined, 1);
    const { partitions, reads } = await wildcardPopReads(db(), 'busy');
    expect(partitions).toEqual(['p41']);
    // A handful of index probes (the new write, its cursor, the claim), not one per partition.
    expect(reads.log_partitions).toBeLessThan(12);
    expect(reads.log_consumers).toBeLessThan(12);
  });

  it('reads only candidate partitions: the scan touches the partition with work, not the idle ones', async () => {
    for (let i = 0; i < 50; i++) await b.pushNumbered('wide', `p${i}`, 1);
    for (let i = 0; i < 60; i++) {
      const r = await b.pop('queue/wide?batch=10&partitions=10');
      if (r.status === 204) break;
      await b.ackAll(r.body);
    }
    await age('wide');
    await b.pushNumbered('wide', 'p7', 1, undefined, 1);
    const id = (await db().query<{ id: string }>(`SELECT id FROM queen.queues WHERE name = 'wide'`))[0]!.id;
    const [sub] = await db().query<{ scanned_at: Date }>(`SELECT scanned_at FROM queen.consumer_subscriptions WHERE queue_id = $1`, [id]);
    const candidates = await db().query<{ n: string }>(
      `SELECT count(*) AS n FROM (
         SELECT lp.id FROM queen.log_partitions lp WHERE lp.queue_id = $1 AND lp.last_write_at >= $2::timestamptz - interval '2 minutes'
         UNION SELECT lc.partition_id FROM queen.log_consumers lc WHERE lc.queue_id = $1 AND lc.consumer_group = '__QUEUE_MODE__' AND lc.pending) c`,
      [id, sub!.scanned_at],
    );
    expect(Number(candidates[0]!.n)).toBe(1);
    const { body } = await b.pop('queue/wide');
    expect(body.partition).toBe('p7');
  });
});
