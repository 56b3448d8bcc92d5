// consume against `npm start`: order per partition under concurrency, failures, a network outage,
// an abort in the middle of a batch, and a handler that outlives its lease.
import { describe, expect, it } from 'vitest';
import { Queen, type Message } from '../../client/src/index.js';
import { outageProxy, unique, useBroker } from './support.js';

const ctx = useBroker();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `check` holds, polling. */
async function until(check: () => boolean, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(20);
  }
}

/** Pushes `n` numbered messages to each partition. */
async function fill(queue: string, partitions: string[], n: number) {
  for (const partition of partitions)
    await ctx.queen.push(
      queue,
      Array.from({ length: n }, (_, i) => ({ data: { partition, i }, partition })),
    );
}

describe('consume', () => {
  it('runs handlers on several partitions at once, in offset order within each, each message once', async () => {
    const queue = unique('order');
    const partitions = ['a', 'b', 'c', 'd'];
    await fill(queue, partitions, 25);
    const seen = new Map<string, number[]>(partitions.map((p) => [p, []]));
    let running = 0;
    let most = 0;
    const stop = new AbortController();
    const done = ctx.queen.consume<{ partition: string; i: number }>(
      queue,
      async (m) => {
        most = Math.max(most, ++running);
        await sleep(5);
        seen.get(m.data.partition)!.push(m.data.i);
        running--;
      },
      { concurrency: 4, batch: 5, signal: stop.signal, waitMs: 1_000 },
    );
    await until(() => [...seen.values()].every((s) => s.length === 25));
    stop.abort();
    await done;
    for (const p of partitions) expect(seen.get(p)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(most).toBeGreaterThan(1);
    expect(await ctx.queen.pop(queue)).toBeNull();
  });

  it('acks a throwing handler failed with its message: retried, then dead-lettered; the messages after it are redelivered', async () => {
    const queue = unique('throws');
    await ctx.queen.admin.configure({ queue, options: { retryLimit: 1 } });
    await fill(queue, ['p'], 3);
    const calls: number[] = [];
    const stop = new AbortController();
    const done = ctx.queen.consume<{ i: number }>(
      queue,
      (m) => {
        calls.push(m.data.i);
        if (m.data.i === 1) throw new Error(`cannot handle ${m.data.i}`);
      },
      { batch: 10, signal: stop.signal, waitMs: 1_000 },
    );
    await until(() => calls.filter((i) => i === 2).length === 1);
    stop.abort();
    await done;
    // 0, then 1 fails (budget 1: delivered twice), then 2 after 1 went to the DLQ.
    expect(calls).toEqual([0, 1, 1, 2]);
    const dead = await ctx.queen.admin.dlq.list<{ i: number }>({ queue });
    expect(dead.messages.map((m) => [m.data.i, m.errorMessage])).toEqual([[1, 'cannot handle 1']]);
  });

  it('survives a network outage mid-consume: backs off, reconnects and loses nothing', async () => {
    const queue = unique('outage');
    await ctx.queen.admin.configure({ queue, options: { leaseTime: 2 } });
    await fill(queue, ['p'], 40);
    const proxy = await outageProxy(ctx.broker.url);
    const errors: unknown[] = [];
    const seen: number[] = [];
    const stop = new AbortController();
    const client = new Queen({ url: proxy.url, retries: 1 });
    let cut = false;
    const done = client.consume<{ i: number }>(
      queue,
      async (m) => {
        seen.push(m.data.i);
        if (m.data.i === 10 && !cut) {
          cut = true;
          proxy.cut(); // in the middle of a batch: its ack and the next pops fail
          setTimeout(() => proxy.restore(), 1_500);
        }
      },
      { batch: 5, signal: stop.signal, waitMs: 1_000, onError: (e) => errors.push(e) },
    );
    try {
      await until(() => new Set(seen).size === 40, 40_000).catch((e) => {
        throw new Error(`${e.message}: saw ${seen.join(',')}; errors ${errors.map((x) => String(x)).join(' | ')}`);
      });
    } finally {
      stop.abort();
      await done;
      await proxy.close();
    }
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => (e as { code?: string }).code === 'network_error' || (e as { code?: string }).code === 'ack_refused')).toBe(
      true,
    );
    // At least once: the batch whose ack was lost comes again after its lease, in order.
    expect([...new Set(seen)].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(seen.filter((i) => i > 14).every((i, k, a) => k === 0 || a[k - 1]! < i)).toBe(true);
    expect(await ctx.queen.pop(queue)).toBeNull();
  }, 60_000);

  it('stops on abort mid-batch: the running handler finishes and is acked, the rest go back at once; nothing acked twice, nothing lost', async () => {
    const queue = unique('abort');
    await ctx.queen.admin.configure({ queue, options: { leaseTime: 300 } });
    await fill(queue, ['p'], 10);
    const handled: number[] = [];
    const stop = new AbortController();
    const done = ctx.queen.consume<{ i: number }>(
      queue,
      async (m) => {
        if (m.data.i === 3) stop.abort(); // mid-batch, while this handler runs
        await sleep(200);
        handled.push(m.data.i);
      },
      { batch: 10, signal: stop.signal, waitMs: 1_000 },
    );
    await done;
    expect(handled).toEqual([0, 1, 2, 3]);
    // Without waiting for the 300 s lease: 4..9 were handed back, 0..3 committed.
    const rest = await ctx.queen.pop<{ i: number }>(queue, { batch: 100 });
    expect(rest!.messages.map((m) => m.data.i)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(rest!.messages[0]!.offset).toBe(4);
    await ctx.queen.ack(rest!);
    expect(await ctx.queen.pop(queue)).toBeNull();
  });

  it('extends the lease while a handler runs past it, so no other consumer gets the message, and acks it', async () => {
    const queue = unique('slow');
    await ctx.queen.admin.configure({ queue, options: { leaseTime: 2 } });
    await fill(queue, ['p'], 1);
    const stop = new AbortController();
    const rivalSaw: Message[] = [];
    let finished = false;
    const done = ctx.queen.consume(
      queue,
      async () => {
        // Five seconds on a two-second lease, while a rival of the same group keeps popping.
        const end = Date.now() + 5_000;
        while (Date.now() < end) {
          const rival = await ctx.queen.pop(queue);
          if (rival) rivalSaw.push(...rival.messages);
          await sleep(250);
        }
        finished = true;
      },
      { signal: stop.signal, waitMs: 1_000 },
    );
    const errors: unknown[] = [];
    await until(() => finished, 20_000);
    await sleep(300);
    stop.abort();
    await done.catch((e) => errors.push(e));
    expect(errors).toEqual([]);
    expect(rivalSaw).toEqual([]);
    const described = (await ctx.queen.request<{ partitions: { consumers?: unknown[] }[] }>('GET', `/api/v1/resources/queues/${queue}`))!;
    expect(JSON.stringify(described)).toMatch(/"committed":0/);
    expect(await ctx.queen.pop(queue)).toBeNull();
  }, 30_000);

  it('rejects at once on an answer no retry can fix, such as a bad queue name', async () => {
    const err = await ctx.queen.consume('bad/name', () => {}, { waitMs: 1_000 }).catch((e) => e);
    expect(err).toMatchObject({ name: 'QueenError', status: 400 });
  });
});
