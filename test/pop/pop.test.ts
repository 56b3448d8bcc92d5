import { describe, expect, it } from 'vitest';
import { observe, type StatementLog } from '../../lib/db/client.js';
import type { Message, PopResponse } from '../../client/src/wire.js';
import { offsets, testClient, wireKeys } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { configureQueue, cursor, expireLeases } from './helpers.js';

const db = useDatabase();
const b = testClient(db);

describe('pop of a named queue', () => {
  it('delivers pushed messages in offset order with every field, then answers 204 while the lease is held', async () => {
    const pushed = await b.pushNumbered('orders', 'cust-1', 3);
    const { status, body } = await b.pop('queue/orders/partition/cust-1?batch=10');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: true,
      queue: 'orders',
      partition: 'cust-1',
      partitionId: pushed[0]!.partition_id,
      consumerGroup: '__QUEUE_MODE__',
      partitionsClaimed: 1,
    });
    expect(body.leaseId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(Object.keys(body).sort()).toEqual(
      wireKeys<PopResponse>()([
        'success',
        'queue',
        'partition',
        'partitionId',
        'leaseId',
        'consumerGroup',
        'partitionsClaimed',
        'messages',
      ]),
    );
    const messageKeys = [
      'id',
      'transactionId',
      'traceId',
      'data',
      'producerSub',
      'createdAt',
      'partitionId',
      'partition',
      'queue',
      'leaseId',
      'consumerGroup',
      'offset',
      'attempt',
    ] as const;
    for (const m of body.messages) expect(Object.keys(m).sort()).toEqual(wireKeys<Message>()(messageKeys));
    expect(offsets(body)).toEqual([0, 1, 2]);
    expect(body.messages[0]).toMatchObject({
      transactionId: 'cust-1-0',
      data: { n: 0 },
      traceId: null,
      partition: 'cust-1',
      queue: 'orders',
      leaseId: body.leaseId,
      attempt: 1,
      offset: 0,
    });
    expect(new Date(body.messages[0]!.createdAt).toISOString()).toBe(body.messages[0]!.createdAt);
    expect((await b.pop('queue/orders/partition/cust-1?batch=10')).status).toBe(204);
    expect((await b.pop('queue/orders?batch=10')).status).toBe(204);
  });

  it('returns payload text verbatim, big integers and number formatting included', async () => {
    const res = await b.call('POST', '/api/v1/push', '{"items":[{"queue":"verbatim","payload":{"big":12345678901234567890,"f":1.50}}]}');
    expect(res.status).toBe(201);
    const raw = await b.call('GET', '/api/v1/pop/queue/verbatim');
    expect(raw.text).toContain('"data":{"big":12345678901234567890,"f":1.50}');
  });

  it('costs exactly one SQL statement', async () => {
    await b.pushNumbered('one-stmt', 'p', 5);
    const log: StatementLog = { statements: [] };
    const { call } = testClient(observe(db(), log));
    const res = await call('GET', '/api/v1/pop/queue/one-stmt?batch=5');
    expect(res.status).toBe(200);
    expect(log.statements).toHaveLength(1);
    log.statements.length = 0;
    expect((await call('GET', '/api/v1/pop/queue/one-stmt/partition/p')).status).toBe(204);
    expect(log.statements).toHaveLength(1);
  });

  it('calls ensure_queue only for a queue that does not exist yet, and still creates that one', async () => {
    await b.pushNumbered('known-queue', 'p', 1);
    const calls = async (queue: string) =>
      db().transaction(async (tx) => {
        await tx.query(`SET LOCAL track_functions = 'pl'`);
        await tx.query(
          `SELECT * FROM queen.pop('default', $1, NULL, NULL, NULL, '__QUEUE_MODE__', 10, 1, 'lease-x', false, 'all', NULL, 1000000)`,
          [queue],
        );
        const [r] = await tx.query<{ n: string | null }>(
          `SELECT pg_stat_get_xact_function_calls('queen.ensure_queue(text,text)'::regprocedure) AS n`,
        );
        return Number(r!.n ?? 0);
      });
    expect(await calls('known-queue')).toBe(0);
    expect(await calls('unknown-queue')).toBe(1);
    expect(await db().query(`SELECT 1 FROM queen.queues WHERE name = 'unknown-queue'`)).toHaveLength(1);
  });

  it('runs pop with enable_seqscan off, which pop_claim inherits instead of setting it again per claim', async () => {
    const rows = await db().query<{ proname: string; proconfig: string[] | null }>(
      `SELECT proname, proconfig FROM pg_proc WHERE pronamespace = 'queen'::regnamespace AND proname IN ('pop', 'pop_claim') ORDER BY proname`,
    );
    expect(rows.find((r) => r.proname === 'pop')!.proconfig).toContain('enable_seqscan=off');
    expect(rows.find((r) => r.proname === 'pop_claim')!.proconfig).toBeNull();
  });

  it('spends the batch budget exactly across segments and leases only what it returns', async () => {
    await b.pushNumbered('budget', 'p', 2, undefined, 0);
    await b.pushNumbered('budget', 'p', 2, undefined, 2);
    await b.pushNumbered('budget', 'p', 2, undefined, 4);
    const first = await b.pop('queue/budget?batch=3');
    expect(offsets(first.body)).toEqual([0, 1, 2]);
    expect(Number((await cursor(db(), 'budget', 'p')).batch_end)).toBe(2);
    expect((await b.ackAll(first.body)).body.every((r) => r.success && r.leaseReleased)).toBe(true);
    expect(offsets((await b.pop('queue/budget?batch=3')).body)).toEqual([3, 4, 5]);
  });

  it('claims several partitions under one leaseId with partitions=N, filling the batch in claim order', async () => {
    for (const p of ['a', 'b', 'c']) await b.pushNumbered('multi', p, 2);
    const { body } = await b.pop('queue/multi?batch=5&partitions=3');
    expect(body.partitionsClaimed).toBe(3);
    expect(body.messages).toHaveLength(5);
    expect(new Set(body.messages.map((m) => m.leaseId))).toEqual(new Set([body.leaseId]));
    const byPartition = new Map<string, number[]>();
    for (const m of body.messages) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.offset]);
    expect([...byPartition.values()].map((o) => o.join())).toEqual(['0,1', '0,1', '0']);
    expect(body.partition).toBe(body.messages[0]!.partition);
    const acks = await b.ackAll(body);
    expect(acks.body.every((r) => r.success)).toBe(true);
    const rest = await b.pop('queue/multi?batch=5&partitions=3');
    expect(rest.body.messages).toHaveLength(1);
    expect(rest.body.messages[0]!.offset).toBe(1);
  });

  it('skips a partition leased by the same group on a wildcard pop but never blocks another group', async () => {
    await b.pushNumbered('skip', 'x', 1);
    await b.pushNumbered('skip', 'y', 1);
    const one = await b.pop('queue/skip');
    const two = await b.pop('queue/skip');
    expect(new Set([one.body.partition, two.body.partition])).toEqual(new Set(['x', 'y']));
    expect((await b.pop('queue/skip')).status).toBe(204);
    expect((await b.pop('queue/skip?consumerGroup=other&batch=5')).status).toBe(200);
  });

  it('commits the cursor inside the pop with autoAck and answers an empty leaseId', async () => {
    await b.pushNumbered('auto', 'p', 3);
    const { body } = await b.pop('queue/auto?batch=2&autoAck=true');
    expect(body.leaseId).toBe('');
    expect(offsets(body)).toEqual([0, 1]);
    const c = await cursor(db(), 'auto', 'p');
    expect(Number(c.committed)).toBe(1);
    expect(c.batch_end).toBeNull();
    expect(offsets((await b.pop('queue/auto?batch=2&autoAck=true')).body)).toEqual([2]);
  });

  it('provisions a queue that does not exist and answers 204', async () => {
    expect((await b.pop('queue/not-yet?consumerGroup=early')).status).toBe(204);
    const rows = await db().query(
      `SELECT q.lease_time, s.consumer_group FROM queen.queues q JOIN queen.consumer_subscriptions s ON s.queue_id = q.id WHERE q.name = 'not-yet'`,
    );
    expect(rows).toEqual([{ lease_time: 60, consumer_group: 'early' }]);
  });

  it('redelivers from committed + 1 after the lease expires, counting the attempt', async () => {
    await b.pushNumbered('expiry', 'p', 2);
    const first = await b.pop('queue/expiry?batch=2');
    expect(first.body.messages[0]!.attempt).toBe(1);
    await expireLeases(db(), 'expiry');
    const again = await b.pop('queue/expiry?batch=2');
    expect(offsets(again.body)).toEqual([0, 1]);
    expect(again.body.messages.map((m) => m.attempt)).toEqual([2, 2]);
    expect(again.body.leaseId).not.toBe(first.body.leaseId);
    const c = await cursor(db(), 'expiry', 'p');
    expect(c.attempt_count).toBe(2);
    expect(c.batch_retry_count).toBe(0);
  });
});

describe('pop parameters', () => {
  it.each([
    'batch=0',
    'batch=-1',
    'batch=abc',
    'batch=10001',
    'partitions=0',
    'wait=maybe',
    'timeout=-5',
    'subscriptionMode=sideways',
    'subscriptionFrom=yesterday',
    'consumerGroup=%20x',
    // Each answered 500: year 0000, or an instant outside years 1..9999 in UTC, which SQL refuses.
    'subscriptionFrom=0000-01-01T00:00:00Z',
    'subscriptionFrom=0001-01-01T00:00:00%2B15:00',
    'subscriptionFrom=9999-12-31T23:59:59-15:59',
    'subscriptionFrom=2026-02-30T00:00:00Z',
  ])('answers 400 for %s and leases nothing', async (q) => {
    await b.pushNumbered('bad-input', 'p', 1);
    const res = await b.call('GET', `/api/v1/pop/queue/bad-input?${q}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toMatch(/^[a-z_]+$/);
    const rows = await db().query(
      `SELECT 1 FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'bad-input' AND lc.batch_end IS NOT NULL`,
    );
    expect(rows).toHaveLength(0);
  });

  it('finds queues by namespace and task on a discovery pop', async () => {
    await b.pushNumbered('billing.invoices', 'p', 1);
    const res = await b.call('GET', '/api/v1/pop?namespace=billing&task=invoices&batch=5');
    expect(res.status).toBe(200);
    expect(res.body.queue).toBe('billing.invoices');
    expect((await b.call('GET', '/api/v1/pop?namespace=nobody')).status).toBe(204);
    expect((await b.call('GET', '/api/v1/pop')).status).toBe(400);
  });
});

describe('subscriptions', () => {
  it('starts a `new` group after the messages that existed when it first popped, on old and new partitions', async () => {
    await b.pushNumbered('subs', 'old', 2);
    // PGlite's clock can be coarse: keep the push and the subscription at distinct instants.
    await new Promise((r) => setTimeout(r, 5));
    expect((await b.pop('queue/subs?consumerGroup=late&subscriptionMode=new')).status).toBe(204);
    await new Promise((r) => setTimeout(r, 5));
    await b.pushNumbered('subs', 'old', 1, undefined, 2);
    await b.pushNumbered('subs', 'fresh', 1);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { status, body } = await b.pop('queue/subs?consumerGroup=late&batch=10');
      if (status === 204) break;
      seen.push(...body.messages.map((m) => `${m.partition}:${m.offset}`));
      await b.ackAll(body, 'completed', 'late');
    }
    expect(seen.sort()).toEqual(['fresh:0', 'old:2']);
    await new Promise((r) => setTimeout(r, 5));
    const early = await b.pop('queue/subs?consumerGroup=early&subscriptionMode=latest&batch=10');
    expect(early.status).toBe(204);
    const all = await b.pop('queue/subs?consumerGroup=everything&subscriptionMode=from_beginning&batch=10&partitions=2');
    expect(all.body.messages).toHaveLength(4);
  });

  it('lets subscriptionFrom win over subscriptionMode and ignores later values', async () => {
    await b.pushNumbered('subs-from', 'p', 2);
    const [row] = await db().query<{ t: Date }>(`SELECT now() + interval '1 millisecond' AS t`);
    await new Promise((r) => setTimeout(r, 20));
    await b.pushNumbered('subs-from', 'p', 1, undefined, 2);
    const from = encodeURIComponent(row!.t.toISOString());
    const { body } = await b.pop(`queue/subs-from?consumerGroup=ts&subscriptionMode=all&subscriptionFrom=${from}&batch=10`);
    expect(offsets(body)).toEqual([2]);
    const [sub] = await db().query<{ mode: string }>(`SELECT mode FROM queen.consumer_subscriptions WHERE consumer_group = 'ts'`);
    expect(sub!.mode).toBe('from');
    await expireLeases(db(), 'subs-from', 'ts');
    expect(offsets((await b.pop('queue/subs-from?consumerGroup=ts&subscriptionMode=all&batch=10')).body)).toEqual([2]);
  });

  it('always starts queue mode from the beginning', async () => {
    await b.pushNumbered('qmode', 'p', 2);
    expect(offsets((await b.pop('queue/qmode?subscriptionMode=new&batch=5')).body)).toEqual([0, 1]);
  });
});

describe('delivery windows', () => {
  it('delivers only messages at least delayedProcessing seconds old', async () => {
    await b.pushNumbered('delayed', 'p', 1);
    await configureQueue(db(), 'delayed', 'delayed_processing = 3600');
    expect((await b.pop('queue/delayed')).status).toBe(204);
    await db().query(`UPDATE queen.log_segments SET created_at = created_at - interval '2 hours'`);
    await configureQueue(db(), 'delayed', 'delayed_processing = 1800');
    expect((await b.pop('queue/delayed')).status).toBe(200);
  });

  it('holds a partition until its newest message is windowBuffer seconds old', async () => {
    await b.pushNumbered('window', 'p', 1);
    await configureQueue(db(), 'window', 'window_buffer = 3600');
    expect((await b.pop('queue/window')).status).toBe(204);
    await configureQueue(db(), 'window', 'window_buffer = 0');
    expect((await b.pop('queue/window')).status).toBe(200);
  });
});

describe('the response cap', () => {
  it('stops before maxResponseBytes, always returns one, and leases only what it returned', async () => {
    const small = testClient(db, { config: { maxResponseBytes: 3000 } });
    const big = 'x'.repeat(900);
    await small.call('POST', '/api/v1/push', { items: Array.from({ length: 6 }, (_, i) => ({ queue: 'capped', payload: { i, big } })) });
    const first = await small.pop('queue/capped?batch=100');
    expect(first.body.messages.length).toBeGreaterThan(0);
    expect(first.body.messages.length).toBeLessThan(6);
    const last = first.body.messages.at(-1)!.offset;
    expect(Number((await cursor(db(), 'capped', 'Default')).batch_end)).toBe(last);
    await small.ackAll(first.body);
    const next = await small.pop('queue/capped?batch=100');
    expect(next.body.messages[0]!.offset).toBe(last + 1);
    const tiny = testClient(db, { config: { maxResponseBytes: 10 } });
    await expireLeases(db(), 'capped');
    expect((await tiny.pop('queue/capped?batch=100')).body.messages).toHaveLength(1);
  });
});

describe('long-poll', () => {
  it('returns messages pushed while waiting, and 204 at the deadline', async () => {
    const waiting = b.pop('queue/poll?wait=true&timeout=5000');
    await new Promise((r) => setTimeout(r, 300));
    await b.pushNumbered('poll', 'p', 1);
    expect((await waiting).status).toBe(200);
    expect((await b.pop('queue/poll-empty?wait=true&timeout=200')).status).toBe(204);
  });
});
