import { describe, expect, it } from 'vitest';
import { observe, type StatementLog } from '../../lib/db/client.js';
import type { AckResult } from '../../client/src/wire.js';
import { offsets, type PopBody, testClient, wireKeys } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { configureQueue, cursor, expireLeases } from '../pop/helpers.js';

const db = useDatabase();
const b = testClient(db);

const item = (body: PopBody, offset: number, status: string, extra: object = {}) => {
  const m = body.messages.find((x) => x.offset === offset)!;
  return { transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status, ...extra };
};

async function popFive(queue: string) {
  await b.pushNumbered(queue, 'p', 5);
  const { body } = await b.pop(`queue/${queue}?batch=5`);
  expect(offsets(body)).toEqual([0, 1, 2, 3, 4]);
  return body;
}

const committed = async (queue: string) => Number((await cursor(db(), queue, 'p')).committed);
const dlqRows = (queue: string) =>
  db().query<Record<string, any>>(
    `SELECT d.* FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 ORDER BY msg_offset`,
    [queue],
  );

describe('ack of completed messages', () => {
  it('moves the cursor, releases the lease at batch_end and costs one statement', async () => {
    const body = await popFive('done');
    const log: StatementLog = { statements: [] };
    const { call } = testClient(observe(db(), log));
    const res = await call<AckResult[]>('POST', '/api/v1/ack/batch', {
      acknowledgments: [0, 1, 2, 3, 4].map((o) => item(body, o, 'completed')),
    });
    expect(log.statements).toHaveLength(1);
    const last: AckResult = {
      index: 4,
      transactionId: 'p-4',
      success: true,
      error: null,
      queueName: 'done',
      partitionName: 'p',
      leaseReleased: true,
      dlq: false,
      committed: true,
      offset: 4,
    };
    expect(res.body[4]).toEqual(last);
    // The optional keys (skipped, alreadyCommitted) appear only when they apply.
    const required = [
      'index',
      'transactionId',
      'success',
      'error',
      'queueName',
      'partitionName',
      'leaseReleased',
      'dlq',
      'committed',
      'offset',
      'skipped',
      'alreadyCommitted',
    ] as const;
    expect(Object.keys(res.body[4]!).sort()).toEqual(
      wireKeys<AckResult>()(required).filter((k) => k !== 'skipped' && k !== 'alreadyCommitted'),
    );
    const c = await cursor(db(), 'done', 'p');
    expect([Number(c.committed), c.batch_end, c.worker_id]).toEqual([4, null, null]);
  });

  it('keeps the lease while part of the batch is unacked, and a single ack route answers too', async () => {
    const body = await popFive('partial');
    const res = await b.call('POST', '/api/v1/ack', item(body, 1, 'success'));
    expect(res.body).toEqual([expect.objectContaining({ index: 0, success: true, leaseReleased: false, committed: true, offset: 1 })]);
    expect(Number((await cursor(db(), 'partial', 'p')).batch_end)).toBe(4);
    expect(await committed('partial')).toBe(1);
  });

  it('accepts the offset pop returned instead of a hash lookup and rejects one outside the lease', async () => {
    const body = await popFive('by-offset');
    const res = await b.ackBatch([item(body, 2, 'completed', { offset: 2 })]);
    expect(res.body[0]).toMatchObject({ success: true, offset: 2 });
    const wrong = await b.ackBatch([item(body, 3, 'completed', { offset: 9 })]);
    expect(wrong.body[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Message not found: /) });
    expect(await committed('by-offset')).toBe(2);
  });

  it('never moves the cursor backwards: acking at or below it is a no-op success', async () => {
    const body = await popFive('backwards');
    await b.ackBatch([item(body, 3, 'completed')]);
    const res = await b.ackBatch([item(body, 1, 'completed', { offset: 1 })]);
    expect(res.body[0]).toMatchObject({ success: true, committed: true });
    expect(await committed('backwards')).toBe(3);
  });

  it('resolves a transactionId repeated outside the dedup window to the lowest offset after the cursor', async () => {
    await b.pushNumbered('repeat', 'p', 1, () => 'same');
    await configureQueue(db(), 'repeat', 'dedup_window_seconds = 0');
    await b.pushNumbered('repeat', 'p', 1, () => 'same');
    const { body } = await b.pop('queue/repeat?batch=2');
    expect(body.messages.map((m) => m.transactionId)).toEqual(['same', 'same']);
    const first = await b.ackBatch([{ transactionId: 'same', partitionId: body.partitionId, leaseId: body.leaseId, status: 'completed' }]);
    expect(first.body[0]).toMatchObject({ offset: 0, leaseReleased: false });
    const second = await b.ackBatch([{ transactionId: 'same', partitionId: body.partitionId, leaseId: body.leaseId, status: 'completed' }]);
    expect(second.body[0]).toMatchObject({ offset: 1, leaseReleased: true });
  });

  it('acks items of several partitions and groups in one call, each cursor on its own, answering in request order', async () => {
    for (const p of ['a', 'b']) await b.pushNumbered('mixed', p, 2);
    const pops = await Promise.all(
      [
        ['a', 'g1'],
        ['b', 'g1'],
        ['a', 'g2'],
      ].map(([p, g]) => b.popQueue('mixed', { batch: 2, consumerGroup: g! }, p)),
    );
    const [a1, b1, a2] = pops.map((r) => r.body as PopBody);
    const res = await b.ackBatch([
      { ...item(b1!, 1, 'completed'), consumerGroup: 'g1' },
      { ...item(a2!, 0, 'completed'), consumerGroup: 'g2' },
      { ...item(a1!, 1, 'failed'), consumerGroup: 'g1' },
      { ...item(a1!, 0, 'completed'), consumerGroup: 'g1' },
    ]);
    expect(res.body.map((r) => [r.index, r.transactionId, r.success, r.committed])).toEqual([
      [0, 'b-1', true, true],
      [1, 'a-0', true, true],
      [2, 'a-1', true, false],
      [3, 'a-0', true, true],
    ]);
    const committedOf = async (p: string, g: string) => Number((await cursor(db(), 'mixed', p, g)).committed);
    expect([await committedOf('a', 'g1'), await committedOf('b', 'g1'), await committedOf('a', 'g2')]).toEqual([0, 1, 0]);
  });

  it('finds a transactionId whose sidecar hash was purged by decoding the leased segment', async () => {
    const body = await popFive('purged');
    await db().query(`DELETE FROM queen.log_txns t USING queen.log_partitions p WHERE p.id = t.partition_id AND p.id = $1`, [
      body.partitionId,
    ]);
    await db().query(`UPDATE queen.log_partitions SET txns_start = 5 WHERE id = $1`, [body.partitionId]);
    const res = await b.ackBatch([item(body, 3, 'completed'), { ...item(body, 0, 'completed'), transactionId: 'never-pushed' }]);
    expect(res.body[0]).toMatchObject({ success: true, offset: 3 });
    expect(res.body[1]).toMatchObject({ success: false, error: expect.stringMatching(/^Message not found: /) });
    expect(await committed('purged')).toBe(3);
  });
});

describe('the clamp and the lowest signal', () => {
  it('clamps completed acks below the lowest failure and redelivers everything after it', async () => {
    const body = await popFive('clamp');
    const res = await b.ackBatch([
      item(body, 0, 'completed'),
      item(body, 1, 'completed'),
      item(body, 2, 'failed'),
      item(body, 3, 'completed'),
      item(body, 4, 'completed'),
    ]);
    expect(res.body.map((r) => r.committed)).toEqual([true, true, false, false, false]);
    expect(res.body.every((r) => r.success && r.leaseReleased)).toBe(true);
    const c = await cursor(db(), 'clamp', 'p');
    expect([Number(c.committed), c.batch_end, c.batch_retry_count]).toEqual([1, null, 1]);
    const again = await b.pop('queue/clamp?batch=5');
    expect(offsets(again.body)).toEqual([2, 3, 4]);
  });

  it('loses nothing when a whole batch is nacked in one call', async () => {
    const body = await popFive('nack-all');
    await b.ackBatch([0, 1, 2, 3, 4].map((o) => item(body, o, 'failed')));
    expect(await committed('nack-all')).toBe(-1);
    expect(offsets((await b.pop('queue/nack-all?batch=5')).body)).toEqual([0, 1, 2, 3, 4]);
    expect(await dlqRows('nack-all')).toHaveLength(0);
  });

  it('lets dlq beat failed beat retry at equal offsets', async () => {
    const body = await popFive('priority');
    const res = await b.ackBatch([item(body, 1, 'retry'), item(body, 1, 'dlq', { error: 'poison' }), item(body, 1, 'failed')]);
    expect(res.body[1]).toMatchObject({ dlq: true, committed: true });
    expect(await committed('priority')).toBe(1);
    expect((await dlqRows('priority')).map((r) => [Number(r.msg_offset), r.error_message])).toEqual([[1, 'poison']]);

    // The DLQ move released the lease: the rest comes back in a new batch.
    const again = (await b.pop('queue/priority?batch=5')).body;
    expect(offsets(again)).toEqual([2, 3, 4]);
    await b.ackBatch([item(again, 2, 'retry'), item(again, 2, 'failed')]);
    expect(await committed('priority')).toBe(1);
    expect((await cursor(db(), 'priority', 'p')).batch_retry_count).toBe(1);
  });

  it('redelivers a retry at once without charging the budget', async () => {
    const body = await popFive('retry');
    const res = await b.ackBatch([item(body, 0, 'completed'), item(body, 2, 'retry')]);
    expect(res.body.map((r) => r.committed)).toEqual([true, false]);
    const c = await cursor(db(), 'retry', 'p');
    expect([Number(c.committed), c.batch_retry_count, c.batch_end]).toEqual([1, 0, null]);
    expect(offsets((await b.pop('queue/retry?batch=5')).body)).toEqual([2, 3, 4]);
  });
});

describe('the retry budget and the dead-letter move', () => {
  it('gives retryLimit = N exactly N + 1 deliveries, then moves the message to the DLQ with its frame', async () => {
    await configureQueue(db(), 'budget', 'retry_limit = 2');
    await b.call('POST', '/api/v1/push', {
      items: [
        { queue: 'budget', partition: 'p', payload: { v: 1 }, transactionId: 't0', traceId: '0193a0f0-0000-7000-8000-000000000001' },
        { queue: 'budget', partition: 'p', payload: 2, transactionId: 't1' },
      ],
    });
    await configureQueue(db(), 'budget', 'retry_limit = 2');
    let deliveries = 0;
    let last: any;
    for (;;) {
      const { status, body } = await b.pop('queue/budget?batch=1');
      if (status === 204 || body.messages[0]!.offset !== 0) break;
      deliveries++;
      last = (await b.ackBatch([item(body, 0, 'failed', { error: `boom ${deliveries}` })])).body[0];
    }
    expect(deliveries).toBe(3);
    expect(last).toMatchObject({ success: true, dlq: true, committed: true, offset: 0 });
    const [row] = await dlqRows('budget');
    expect(row).toMatchObject({
      transaction_id: 't0',
      trace_id: '0193a0f0-0000-7000-8000-000000000001',
      error_message: 'boom 3',
      retry_count: 3,
      encrypted: false,
      consumer_group: '__QUEUE_MODE__',
    });
    expect(new TextDecoder().decode(row!.payload)).toBe('{"v":1}');
    const c = await cursor(db(), 'budget', 'p');
    expect([Number(c.committed), c.batch_retry_count, c.retry_offset]).toEqual([0, 0, null]);
  });

  it('writes the DLQ row and the cursor move in the same transaction, and only if the cursor did not move', async () => {
    const body = await popFive('dlq-atomic');
    const log: StatementLog = { statements: [] };
    const res = await testClient(observe(db(), log)).ackBatch([item(body, 2, 'dlq', { error: 'bad' })]);
    expect(log.statements).toHaveLength(2);
    expect(res.body[0]).toMatchObject({ dlq: true, committed: true });
    expect(await committed('dlq-atomic')).toBe(2);
    expect(await dlqRows('dlq-atomic')).toHaveLength(1);
    // The second call of a dead-letter ack recomputes under the cursor lock: a frame for an
    // offset that is no longer the signal writes nothing. (The move released the lease: no leaseId.)
    const rows = await db().query<{ need: string | null; success: boolean }>(
      `SELECT need, success FROM queen.ack('default', ARRAY[0], ARRAY[$1::bigint], ARRAY['__QUEUE_MODE__'], ARRAY[NULL::bytea], ARRAY[3::bigint], ARRAY['dlq'], ARRAY[NULL::text], ARRAY['x'], NULL,
                 ARRAY[$1::bigint], ARRAY[2::bigint], ARRAY[gen_random_uuid()], ARRAY['p-2'], ARRAY[NULL::uuid], ARRAY[NULL::text], ARRAY['\\x31'::bytea], ARRAY[false], ARRAY[now()])`,
      [body.partitionId],
    );
    expect(rows[0]!.need).toBe('frame');
    expect(await dlqRows('dlq-atomic')).toHaveLength(1);
    expect(await committed('dlq-atomic')).toBe(2);
  });

  it('skips past instead of dead-lettering when the queue has no DLQ', async () => {
    await b.pushNumbered('no-dlq', 'p', 2);
    await configureQueue(db(), 'no-dlq', 'dlq_after_max_retries = false, retry_limit = 0');
    const { body } = await b.pop('queue/no-dlq?batch=2');
    const res = await b.ackBatch([item(body, 0, 'failed')]);
    expect(res.body[0]).toMatchObject({ success: true, dlq: false, skipped: true, committed: true });
    expect(await committed('no-dlq')).toBe(0);
    expect(await dlqRows('no-dlq')).toHaveLength(0);
  });

  it('resets the budget once the cursor passes the offset it was charged for', async () => {
    const body = await popFive('reset');
    await b.ackBatch([item(body, 1, 'failed')]);
    expect((await cursor(db(), 'reset', 'p')).batch_retry_count).toBe(1);
    const again = (await b.pop('queue/reset?batch=5')).body;
    await b.ackBatch([item(again, 1, 'completed'), item(again, 3, 'failed')]);
    const c = await cursor(db(), 'reset', 'p');
    expect([Number(c.committed), c.batch_retry_count, Number(c.retry_offset)]).toEqual([2, 1, 3]);
  });

  it('withholds the partition from the group for retryDelay ms after a failure', async () => {
    await b.pushNumbered('delay', 'p', 1);
    await configureQueue(db(), 'delay', 'retry_delay = 3600000');
    const { body } = await b.pop('queue/delay');
    await b.ackBatch([item(body, 0, 'failed')]);
    expect((await b.pop('queue/delay')).status).toBe(204);
    expect((await b.pop('queue/delay/partition/p')).status).toBe(204);
    await db().query(`UPDATE queen.log_consumers SET retry_not_before = now() - interval '1 second' WHERE partition_id = $1`, [
      body.partitionId,
    ]);
    expect((await b.pop('queue/delay')).body.messages[0]!.offset).toBe(0);
  });
});

describe('leases on ack', () => {
  it('answers "Invalid or expired lease" per item for a wrong or expired lease and moves nothing', async () => {
    const body = await popFive('lease');
    const wrong = await b.ackBatch([
      item(body, 0, 'completed', { leaseId: '0193a0f0-0000-7000-8000-00000000dead' }),
      item(body, 1, 'completed'),
    ]);
    expect(wrong.body[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Invalid or expired lease: .*pop again/) });
    expect(wrong.body[1]).toMatchObject({ success: true });
    await expireLeases(db(), 'lease');
    const expired = await b.ackBatch([item(body, 3, 'completed')]);
    expect(expired.body[0]).toMatchObject({ success: false, error: expect.stringMatching(/^Invalid or expired lease: .*pop again/) });
    expect(await committed('lease')).toBe(1);
  });

  it('refuses an ack without a leaseId while another worker holds the lease, and accepts it once none is live', async () => {
    const body = await popFive('no-lease');
    const res = await b.ackBatch([item(body, 0, 'completed', { leaseId: '' })]);
    expect(res.body[0]!.success).toBe(false);
    await expireLeases(db(), 'no-lease');
    const ok = await b.ackBatch([item(body, 4, 'completed', { leaseId: null })]);
    expect(ok.body[0]).toMatchObject({ success: true, leaseReleased: true });
    expect(await committed('no-lease')).toBe(4);
  });

  it('redelivers after lease expiry from committed + 1 without charging the retry budget', async () => {
    const body = await popFive('expire');
    await b.ackBatch([item(body, 1, 'completed')]);
    await expireLeases(db(), 'expire');
    const again = await b.pop('queue/expire?batch=5');
    expect(offsets(again.body)).toEqual([2, 3, 4]);
    expect((await cursor(db(), 'expire', 'p')).batch_retry_count).toBe(0);
  });

  it('extends a live lease and reports unknown and expired ones', async () => {
    const body = await popFive('extend');
    const before = new Date((await cursor(db(), 'extend', 'p')).lease_expires_at).getTime();
    const res = await b.call('POST', `/api/v1/lease/${body.leaseId}/extend`, { seconds: 600 });
    expect(res.body[0]).toMatchObject({ index: 0, leaseId: body.leaseId, success: true, error: null });
    expect(new Date(res.body[0].expiresAt).getTime()).toBeGreaterThan(before);
    expect((await b.call('POST', '/api/v1/lease/nope/extend')).body[0]).toMatchObject({ success: false, error: 'Lease not found' });
    await expireLeases(db(), 'extend');
    expect((await b.call('POST', `/api/v1/lease/${body.leaseId}/extend`, {})).body[0]).toMatchObject({
      success: false,
      error: 'Lease already expired',
    });
    expect((await b.call('POST', `/api/v1/lease/${body.leaseId}/extend`, { seconds: -1 })).status).toBe(400);
  });
});

describe('bad ack input', () => {
  it.each([
    ['an unknown status', { transactionId: 't', partitionId: '1', status: 'maybe' }],
    ['a missing transactionId', { partitionId: '1', status: 'completed' }],
    ['a missing partitionId', { transactionId: 't', status: 'completed' }],
    ['a negative offset', { transactionId: 't', partitionId: '1', status: 'completed', offset: -1 }],
  ])('answers 400 for %s and moves nothing', async (_, bad) => {
    const body = await popFive(`bad-${String(_).replace(/ /g, '-')}`);
    const res = await b.call('POST', '/api/v1/ack/batch', { acknowledgments: [item(body, 4, 'completed'), bad] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/acknowledgments\[1\]/);
    expect(
      Number(
        (await db().query<{ c: string }>(`SELECT committed AS c FROM queen.log_consumers WHERE partition_id = $1`, [body.partitionId]))[0]!
          .c,
      ),
    ).toBe(-1);
  });

  it('answers 400 for a body that is not an ack', async () => {
    expect((await b.call('POST', '/api/v1/ack/batch', { nope: 1 })).status).toBe(400);
    expect((await b.call('POST', '/api/v1/ack', 'not json')).status).toBe(400);
  });

  it('answers "Message not found" for an unknown partition or another tenant\'s, saying to send what the pop returned', async () => {
    const res = await b.ackBatch([{ transactionId: 't', partitionId: '999999', status: 'completed' }]);
    expect(res.body.map((r) => r.error)).toEqual([
      expect.stringMatching(/^Message not found: .*the transactionId and partitionId the pop returned/),
    ]);
  });

  it.each(['abc', '-5', 'Default', '1.5', '', 0, -5, 1.5])(
    'answers 400 invalid_partition_id to an ack partitionId of %j, as a URL path does',
    async (partitionId) => {
      const before = await committed('by-offset');
      for (const [path, body] of [
        ['/api/v1/ack', { transactionId: 't', partitionId, status: 'completed' }],
        ['/api/v1/ack/batch', { acknowledgments: [{ transactionId: 't', partitionId, status: 'completed' }] }],
        ['/api/v1/transaction', { operations: [{ type: 'ack', transactionId: 't', partitionId, status: 'completed' }] }],
      ] as const) {
        const res = await b.call('POST', path, body);
        expect([res.status, res.body.code], `${path} ${res.text}`).toEqual([400, 'invalid_partition_id']);
      }
      expect(await b.call('GET', `/api/v1/messages/${encodeURIComponent(String(partitionId)) || '%20'}/t`).then((r) => r.status)).toBe(400);
      expect(await committed('by-offset')).toBe(before);
    },
  );
});
