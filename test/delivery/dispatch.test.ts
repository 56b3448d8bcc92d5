import { afterEach, describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import { runRetention } from '../../lib/broker/retention.js';
import { seekConsumerGroup } from '../../lib/broker/seek.js';
import { observe, type StatementLog } from '../../lib/db/client.js';
import parsePrometheus from 'parse-prometheus-text-format';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { cursor } from '../pop/helpers.js';
import { attempts, config, pushTo, receiver, subscribe, subscriptionRow, type Receiver } from './helpers.js';

const db = useDatabase();
const soon = (ms = 10_000) => ({ deadline: Date.now() + ms });
let open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.map((r) => r.close()));
  open = [];
});

describe('the dispatcher', () => {
  it('posts a batch signed as Standard Webhooks with the queen headers and body, then commits the group', async () => {
    const subs = new Map<string, string>();
    const r = await receiver(subs);
    open.push(r);
    const sub = await subscribe(db(), 'orders', 'billing', r.url, { headers: { authorization: 'Bearer t0ken' } });
    subs.set(sub.id, sub.secret);
    await pushTo(db(), 'orders', ['cust-1'], 3);

    const report = await runDelivery(db(), config, soon());
    expect(report).toMatchObject({ batches: 1, delivered: 3, failed: 0, deadLettered: 0 });
    expect(r.badSignatures).toEqual([]);
    const [a] = r.arrivals;
    expect(a!.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer t0ken',
      'queen-subscription': sub.id,
      'queen-queue': 'orders',
      'queen-partition': 'cust-1',
      'queen-attempt': '1',
      'queen-max-attempts': '4',
    });
    expect(a!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(a!.body).toMatchObject({ subscription: sub.id, queue: 'orders', partition: 'cust-1', consumerGroup: 'billing', attempt: 1 });
    expect(a!.headers['queen-partition-id']).toBe(a!.body.partitionId);
    expect(a!.body.messages.map((m) => [m.offset, m.transactionId, m.data])).toEqual([
      [0, 'cust-1-0', { n: 0 }],
      [1, 'cust-1-1', { n: 1 }],
      [2, 'cust-1-2', { n: 2 }],
    ]);
    expect(a!.body.messages[0]).toMatchObject({ traceId: null, producerSub: null });
    expect((await cursor(db(), 'orders', 'cust-1', 'billing')).committed).toBe('2');
    expect(await subscriptionRow(db(), sub.id)).toMatchObject({ delivered: '3', failed_attempts: '0' });
    const [log] = await attempts(db(), sub.id);
    expect(log).toMatchObject({
      outcome: 'delivered',
      status: 200,
      attempt: 1,
      from_offset: '0',
      to_offset: '2',
      webhook_id: a!.headers['webhook-id'],
    });
    expect((await runDelivery(db(), config, soon())).batches).toBe(0);
  });

  it('settles each batch in one statement, and claims in one, whatever the number of partitions', async () => {
    const r = await receiver('whsec_AAAA');
    open.push(r);
    await subscribe(db(), 'stmts', 'one', r.url, { batchSize: 5 });
    await pushTo(db(), 'stmts', ['a', 'b', 'c'], 5);
    const log: StatementLog = { statements: [] };
    const report = await runDelivery(observe(db(), log), config, soon());
    expect(report.batches).toBe(3);
    const kinds = log.statements.map((s) => /delivery_claim|delivery_settle|subscription_partitions/.exec(s)?.[0] ?? s);
    expect(kinds.filter((k) => k === 'delivery_settle')).toHaveLength(3);
    // The first claim takes all three partitions; the dispatcher claims again as each slot frees,
    // and looks once for work due later before it stops.
    expect(kinds[0]).toBe('delivery_claim');
    expect(kinds.at(-1)).toBe('subscription_partitions');
    expect(new Set(kinds)).toEqual(new Set(['delivery_claim', 'delivery_settle', 'subscription_partitions']));
    expect(kinds.filter((k) => k === 'delivery_claim').length).toBeLessThanOrEqual(5);
  });

  it('delivers the payload bytes verbatim', async () => {
    const r = await receiver('whsec_AAAA');
    open.push(r);
    await subscribe(db(), 'verbatim-d', 'v', r.url);
    const { pushItems } = await import('../../lib/broker/push.js');
    const text = '{"big":12345678901234567890,"f":1.50,"s":"é\\u0000"}';
    await pushItems(db(), { tenant: 'default', sub: 'producer-1', config }, [
      { queue: 'verbatim-d', partition: 'p', payload: new TextEncoder().encode(text), transactionId: 't1', traceId: null },
    ]);
    await runDelivery(db(), config, soon());
    expect(r.arrivals[0]!.raw).toContain(`"producerSub":"producer-1","data":${text}}`);
  });

  it("delivers an encrypting queue's payloads decrypted, and without the key sends nothing", async () => {
    const r = await receiver('whsec_AAAA');
    open.push(r);
    const keyed = { ...config, encryptionKey: 'ab'.repeat(32) };
    await subscribe(db(), 'sealed-q', 'sq', r.url);
    await db().query(`UPDATE queen.queues SET encryption_enabled = true WHERE name = 'sealed-q'`);
    const { pushItems } = await import('../../lib/broker/push.js');
    await pushItems(db(), { tenant: 'default', sub: null, config: keyed }, [
      { queue: 'sealed-q', partition: 'p', payload: new TextEncoder().encode('{"card":"4242"}'), transactionId: 't1', traceId: null },
    ]);
    const failures: unknown[] = [];
    expect((await runDelivery(db(), config, { ...soon(2000), log: (_m, e) => failures.push(e) })).batches).toBe(0);
    expect(failures).toHaveLength(1);
    expect(r.arrivals).toHaveLength(0);
    await db().query(`UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE consumer_group = 'sq'`);
    await runDelivery(db(), keyed, soon());
    expect(r.arrivals[0]!.body.messages[0]!.data).toEqual({ card: '4242' });
  });

  it('replays after a seek of its consumer group, under new webhook-ids', async () => {
    const r = await receiver('whsec_AAAA');
    open.push(r);
    await subscribe(db(), 'replayed', 'rp', r.url);
    await pushTo(db(), 'replayed', ['p'], 3);
    await runDelivery(db(), config, soon());
    const target = { kind: 'offset', offset: 1, partition: 'p' } as const;
    await seekConsumerGroup(db(), { tenant: 'default' }, { group: 'rp', queue: 'replayed', target });
    await runDelivery(db(), config, soon());
    expect(r.arrivals.map((a) => a.body.messages.map((m) => m.offset))).toEqual([
      [0, 1, 2],
      [1, 2],
    ]);
    expect(r.arrivals[1]!.headers['webhook-id']).not.toBe(r.arrivals[0]!.headers['webhook-id']);
  });

  it('moves nothing when its lease ended before the answer (a seek cleared it), frees the slot, and sends the batch again', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const r = await receiver('whsec_AAAA', async (_a, i) => {
      if (i === 0) await held;
      return { status: 200 };
    });
    open.push(r);
    const sub = await subscribe(db(), 'lost', 'ls', r.url, { maxInFlight: 1 });
    await pushTo(db(), 'lost', ['p'], 3);
    const run = runDelivery(db(), config, soon());
    while (r.arrivals.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const target = { kind: 'offset', offset: 0, partition: 'p' } as const;
    await seekConsumerGroup(db(), { tenant: 'default' }, { group: 'ls', queue: 'lost', target });
    release();
    await run;
    const [first, second] = await attempts(db(), sub.id);
    expect(first!.error).toMatch(/lease had ended/);
    expect(r.arrivals).toHaveLength(2);
    expect(r.arrivals[1]!.headers['webhook-id']).toBe(r.arrivals[0]!.headers['webhook-id']);
    expect(second).toMatchObject({ outcome: 'delivered', error: null });
    expect((await cursor(db(), 'lost', 'p', 'ls')).committed).toBe('2');
  });

  it.skipIf(testMode() !== 'pg')(
    'looks again when another statement held the subscription, instead of leaving the push to the next sweep',
    async () => {
      const r = await receiver('whsec_AAAA');
      open.push(r);
      const sub = await subscribe(db(), 'held', 'h', r.url);
      await pushTo(db(), 'held', ['p'], 1);
      // Another run's claim (or settle) holds the row for a moment while this run is started.
      const holding = db().transaction(async (tx) => {
        await tx.query('SELECT 1 FROM queen.subscriptions WHERE id = $1 FOR UPDATE', [sub.id]);
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const report = await runDelivery(db(), config, soon());
      await holding;
      expect(report.delivered).toBe(1);
      expect(r.arrivals).toHaveLength(1);
    },
  );

  it('keeps the attempts log a week: retention deletes older attempts and keeps the rest', async () => {
    const r = await receiver('whsec_AAAA');
    open.push(r);
    const sub = await subscribe(db(), 'kept', 'k', r.url);
    await pushTo(db(), 'kept', ['p'], 1);
    await runDelivery(db(), config, soon());
    await db().query(
      `INSERT INTO queen.subscription_attempts (subscription_id, partition_id, from_offset, to_offset, webhook_id, attempt, outcome, latency_ms, at)
       SELECT $1, 1, 0, 0, 'msg_old', 1, 'failed', 5, now() - interval '8 days' FROM generate_series(1, 3)`,
      [sub.id],
    );
    // The old rows were written after a newer one here: the purge finds them past it.
    expect((await runRetention(db())).attemptsDeleted).toBe(3);
    expect((await attempts(db(), sub.id)).map((a) => a.outcome)).toEqual(['delivered']);
    await db().query(`UPDATE queen.subscription_attempts SET at = now() - interval '7 days 1 minute' WHERE subscription_id = $1`, [sub.id]);
    expect((await runRetention(db())).attemptsDeleted).toBe(1);
    expect(await attempts(db(), sub.id)).toEqual([]);
  });

  it('exposes per-subscription series on /metrics/prometheus: messages by outcome, failed attempts, lag, oldest age, pause', async () => {
    const r = await receiver('whsec_AAAA', (a) => ({ status: a.body.messages[0]!.offset === 0 ? 500 : 200 }));
    open.push(r);
    const sub = await subscribe(db(), 'prom-sub', 'seen', r.url, { batchSize: 2, retryBaseMs: 5, retryMaxMs: 5 });
    await db().query(`UPDATE queen.queues SET retry_limit = 0 WHERE name = 'prom-sub'`);
    await pushTo(db(), 'prom-sub', ['p'], 3);
    await runDelivery(db(), config, soon());
    await pushTo(db(), 'prom-sub', ['p'], 2, 3);
    await db().query(`UPDATE queen.subscriptions SET state = 'paused', paused_reason = 'paused_by_user' WHERE id = $1`, [sub.id]);
    const res = await testClient(db).app.request('/metrics/prometheus');
    const families = new Map(parsePrometheus(await res.text()).map((f) => [f.name, f]));
    const value = (name: string, labels: Record<string, string> = {}) => {
      const m = families
        .get(name)
        ?.metrics.find((x) =>
          Object.entries({ queue: 'prom-sub', subscription: 'seen', ...labels }).every(([k, v]) => x.labels?.[k] === v),
        );
      return m && Number(m.value);
    };
    expect(value('queen_subscription_messages_total', { outcome: 'delivered' })).toBe(2);
    expect(value('queen_subscription_messages_total', { outcome: 'dead_lettered' })).toBe(1);
    expect(value('queen_subscription_failed_attempts_total')).toBe(1);
    expect(value('queen_subscription_lag_messages')).toBe(2);
    expect(value('queen_subscription_oldest_undelivered_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(value('queen_subscription_in_flight_partitions')).toBe(0);
    expect(value('queen_subscription_paused', { reason: 'paused_by_user' })).toBe(1);
  });
});
