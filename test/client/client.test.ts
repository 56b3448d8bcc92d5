// The client's methods against `npm start`: what each sends, what it answers, and the errors it
// throws with the server's codes.
import { describe, expect, it } from 'vitest';
import { AckError, Queen, QueenError } from '../../client/src/index.js';
import { startBroker, unique, useBroker } from './support.js';

const ctx = useBroker();

describe('push', () => {
  it('answers one typed result per item in order, and fills in transactionIds so a repeated push is a duplicate', async () => {
    const queue = unique('push');
    const items = [{ data: { n: 1 } }, { data: { n: 2 }, partition: 'p2' }, { data: null, transactionId: 'mine' }];
    const first = await ctx.queen.push(queue, items);
    expect(first.map((r) => [r.status, r.offset])).toEqual([
      ['queued', 0],
      ['queued', 0],
      ['queued', 1],
    ]);
    expect(first[0]!.transaction_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first[2]!.transaction_id).toBe('mine');
    // The same ids again: what a retried push sends after a lost answer.
    const again = await ctx.queen.push(
      queue,
      items.map((item, i) => ({ ...item, transactionId: first[i]!.transaction_id })),
    );
    expect(again.map((r) => [r.status, r.offset])).toEqual([
      ['duplicate', 0],
      ['duplicate', 0],
      ['duplicate', 1],
    ]);
  });

  it('throws QueenError with status 400 and the server code for a bad item, and writes nothing', async () => {
    const queue = unique('push-bad');
    const err = await ctx.queen.push(queue, [{ data: 1 }, { data: 2, traceId: 'not-a-uuid' }]).catch((e) => e);
    expect(err).toBeInstanceOf(QueenError);
    expect(err).toMatchObject({ status: 400, retryAfter: null });
    expect(err.code).toMatch(/^invalid_/);
    expect(err.message).toMatch(/traceId/);
    expect(await ctx.queen.pop(queue)).toBeNull();
  });
});

describe('pop and ack', () => {
  it('pops a typed batch, null when empty, and acks it completed', async () => {
    const queue = unique('pop');
    await ctx.queen.push(queue, [{ data: { order: 1 } }, { data: { order: 2 } }]);
    const batch = await ctx.queen.pop<{ order: number }>(queue, { batch: 10 });
    expect(batch!.messages.map((m) => m.data.order)).toEqual([1, 2]);
    expect(batch!.messages[0]).toMatchObject({ queue, partition: 'Default', offset: 0, attempt: 1, leaseId: batch!.leaseId });
    const acked = await ctx.queen.ack(batch!);
    expect(acked.map((r) => [r.success, r.committed])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(await ctx.queen.pop(queue)).toBeNull();
  });

  it('long-polls until a message arrives, within the wait', async () => {
    const queue = unique('wait');
    const started = Date.now();
    const popping = ctx.queen.pop(queue, { wait: true, timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 500));
    await ctx.queen.push(queue, [{ data: 'late' }]);
    const batch = await popping;
    expect(batch!.messages[0]!.data).toBe('late');
    expect(Date.now() - started).toBeLessThan(8_000);
    await ctx.queen.ack(batch!);
  });

  it('pops by partition and consumer group, and acks a subset failed with its error', async () => {
    const queue = unique('groups');
    await ctx.queen.admin.configure({ queue, options: { retryLimit: 0 } });
    await ctx.queen.push(queue, [
      { data: 'a', partition: 'x' },
      { data: 'b', partition: 'x' },
      { data: 'c', partition: 'y' },
    ]);
    const x = await ctx.queen.pop<string>(queue, { group: 'audit', partition: 'x', batch: 10 });
    expect(x!.messages.map((m) => m.data)).toEqual(['a', 'b']);
    expect(x!.consumerGroup).toBe('audit');
    const acked = await ctx.queen.ack(x!.messages.slice(1), 'failed', { error: 'bad b' });
    expect(acked[0]).toMatchObject({ success: true, dlq: true });
    const dead = await ctx.queen.admin.dlq.list<string>({ queue, consumerGroup: 'audit' });
    expect(dead.messages.map((m) => [m.data, m.errorMessage])).toEqual([['b', 'bad b']]);
  });

  it('throws AckError naming the refused items when an ack is refused, never a quiet result', async () => {
    const queue = unique('refused');
    await ctx.queen.push(queue, [{ data: 1 }, { data: 2 }]);
    const batch = (await ctx.queen.pop(queue, { batch: 10 }))!;
    await ctx.queen.ack(batch.messages[0]!, 'retry'); // releases the lease: the second message's leaseId is dead
    const err = await ctx.queen.ack(batch.messages[1]!).catch((e) => e);
    expect(err).toBeInstanceOf(AckError);
    expect(err).toBeInstanceOf(QueenError);
    expect(err.code).toBe('ack_refused');
    expect(err.refused).toMatchObject([
      {
        transactionId: batch.messages[1]!.transactionId,
        success: false,
        error: expect.stringMatching(/^Invalid or expired lease: .*pop again/),
      },
    ]);
    expect(err.message).toContain('Invalid or expired lease');
  });

  it('extends a live lease and throws lease_lost for one that is gone', async () => {
    const queue = unique('lease');
    await ctx.queen.push(queue, [{ data: 1 }]);
    const batch = (await ctx.queen.pop(queue))!;
    const extended = await ctx.queen.extendLease(batch, 120);
    expect(extended.success).toBe(true);
    expect(Date.parse(extended.expiresAt!)).toBeGreaterThan(Date.now() + 100_000);
    await ctx.queen.ack(batch);
    const err = await ctx.queen.extendLease(batch.leaseId).catch((e) => e);
    expect(err).toMatchObject({ name: 'QueenError', code: 'lease_lost', status: 200 });
  });
});

describe('transaction', () => {
  it('acks and pushes in one commit', async () => {
    const [from, to] = [unique('tx-from'), unique('tx-to')];
    await ctx.queen.push(from, [{ data: { step: 1 } }]);
    const batch = (await ctx.queen.pop<{ step: number }>(from))!;
    const res = await ctx.queen
      .transaction()
      .ack(batch)
      .push(to, [{ data: { step: batch.messages[0]!.data.step + 1 } }])
      .commit();
    expect(res.success).toBe(true);
    expect(res.results.map((r) => r.type)).toEqual(['ack', 'push']);
    expect(await ctx.queen.pop(from)).toBeNull();
    expect((await ctx.queen.pop<{ step: number }>(to))!.messages[0]!.data).toEqual({ step: 2 });
  });

  it('throws transaction_failed and writes nothing when one operation is refused', async () => {
    const [from, to] = [unique('txf-from'), unique('txf-to')];
    await ctx.queen.push(from, [{ data: 1 }]);
    const batch = (await ctx.queen.pop(from))!;
    await ctx.queen.ack(batch, 'retry');
    const err = await ctx.queen
      .transaction()
      .push(to, [{ data: 'never' }])
      .ack(batch)
      .commit()
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'QueenError', code: 'transaction_failed' });
    expect(await ctx.queen.pop(to)).toBeNull();
  });
});

describe('admin', () => {
  it('configures a queue and answers with every option', async () => {
    const queue = unique('conf');
    const res = await ctx.queen.admin.configure({ queue, options: { leaseTime: 7, retryLimit: 1 } });
    expect(res).toMatchObject({ configured: true, queue, options: { leaseTime: 7, retryLimit: 1, deadLetterQueue: true } });
  });

  it('lists, retries and deletes dead letters', async () => {
    const queue = unique('dlq');
    await ctx.queen.admin.configure({ queue, options: { retryLimit: 0 } });
    await ctx.queen.push(queue, [
      { data: 'one', transactionId: 'd1' },
      { data: 'two', transactionId: 'd2' },
    ]);
    await ctx.queen.ack((await ctx.queen.pop(queue, { batch: 1 }))!, 'dlq', { error: 'no' });
    await ctx.queen.ack((await ctx.queen.pop(queue, { batch: 1 }))!, 'dlq', { error: 'no' });
    const dead = await ctx.queen.admin.dlq.list({ queue });
    expect(dead.total).toBe(2);
    const [d2, d1] = dead.messages; // newest failure first
    const retried = await ctx.queen.admin.dlq.retry(d1!);
    expect(retried).toMatchObject({ success: true, offset: 2 });
    await ctx.queen.admin.dlq.delete(d2!);
    expect((await ctx.queen.admin.dlq.list({ queue })).total).toBe(0);
    expect((await ctx.queen.pop(queue))!.messages[0]).toMatchObject({ data: 'one', transactionId: retried.transactionId });
    const gone = await ctx.queen.admin.dlq.retry(d1!).catch((e) => e);
    expect(gone).toMatchObject({ status: 404 });
  });
});

describe('errors', () => {
  it('throws an unknown route as 404 route_not_found, and a refused connection as network_error after its retries', async () => {
    const err = await ctx.queen.request('GET', '/api/v1/nope').catch((e) => e);
    expect(err).toMatchObject({ status: 404, code: 'route_not_found' });
    const nowhere = new Queen({ url: 'http://127.0.0.1:9', retries: 2 });
    const started = Date.now();
    const refused = await nowhere.push('x', [{ data: 1 }]).catch((e) => e);
    expect(refused).toMatchObject({ name: 'QueenError', status: 0, code: 'network_error' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('retries a 503 after its Retry-After and a dropped request, then succeeds (transport double around the real server)', async () => {
    const seen: string[] = [];
    let n = 0;
    const flaky: typeof fetch = async (input, init) => {
      seen.push(String(input));
      n++;
      if (n === 1)
        return new Response(JSON.stringify({ error: 'Database unavailable', code: 'database_unavailable' }), {
          status: 503,
          headers: { 'retry-after': '1' },
        });
      if (n === 2) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    const queue = unique('flaky');
    const client = new Queen({ url: ctx.broker.url, fetch: flaky });
    const started = Date.now();
    const pushed = await client.push(queue, [{ data: 1 }]);
    expect(pushed[0]!.status).toBe('queued');
    expect(seen).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('gives up after `retries` and throws the 503 with its code and retryAfter', async () => {
    const always503: typeof fetch = async () =>
      new Response(JSON.stringify({ error: 'away', code: 'database_unavailable' }), { status: 503, headers: { 'retry-after': '0' } });
    const err = await new Queen({ url: ctx.broker.url, fetch: always503, retries: 1 }).pop('q').catch((e) => e);
    expect(err).toMatchObject({ status: 503, code: 'database_unavailable', retryAfter: 0, message: 'away' });
  });

  it('answers 401 unauthenticated without a token and 403 for a read-only token when auth is on', async () => {
    const { JWT_SECRET, token } = await import('../../support/lambda.js');
    const secured = await startBroker({ QUEEN_AUTH: 'jwt', JWT_SECRET });
    try {
      const anonymous = await new Queen({ url: secured.url }).push('s', [{ data: 1 }]).catch((e) => e);
      expect(anonymous).toMatchObject({ status: 401, code: 'unauthenticated' });
      const reader = new Queen({ url: secured.url, token: await token({ role: 'read-only' }) });
      expect(await reader.push('s', [{ data: 1 }]).catch((e) => e)).toMatchObject({ status: 403 });
      const writer = new Queen({ url: secured.url, token: await token({ role: 'read-write', sub: 'w' }) });
      await writer.push('s', [{ data: 1 }]);
      expect((await writer.pop('s'))!.messages[0]!.producerSub).toBe('w');
    } finally {
      await secured.stop();
    }
  });
});
