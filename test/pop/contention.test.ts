// Real PostgreSQL only: every hot verb at once over fresh partitions, the way a deadlock was found
// (docs/locking.md). The load runs through its own pool so that closing it makes every backend
// report its statistics: PostgreSQL's own deadlock counter must not move, not merely the answers
// stay clean (the driver retries a deadlock victim, which would hide one).
import { describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import { testClient, type PopBody } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

const QUEUES = ['ns.alpha', 'ns.beta', 'ns.gamma'];
const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;

describe.skipIf(testMode() !== 'pg')('pops, acks, pushes, extends and seeks racing over fresh partitions', () => {
  const db = useDatabase();

  async function deadlocks(): Promise<number> {
    await db().query('SELECT pg_stat_clear_snapshot()');
    const [row] = await db().query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(row!.n);
  }

  it('answers no 5xx, loses nothing, and PostgreSQL detects no deadlock', async () => {
    const before = await deadlocks();
    const load = await connect({ url: db().url, max: 24 });
    const b = testClient(load);
    // A failed ack here is a retry, never a dead letter: the drain below accounts for every message.
    for (const q of QUEUES) expect((await b.configure(q, { retryLimit: 1000 })).status).toBe(200);
    const statuses = new Map<number, number>();
    const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const pushed = new Set<string>();
    const done = new Map<string, Set<string>>([
      ['__QUEUE_MODE__', new Set()],
      ['g', new Set()],
    ]);
    const deadline = Date.now() + 8_000;
    let round = 0;

    // Multi-partition pushes: each request writes 6 partitions, some new, some shared.
    const pusher = async (w: number) => {
      while (Date.now() < deadline) {
        const r = round++;
        const items = Array.from({ length: 12 }, (_, i) => {
          const partition = i % 2 ? `shared-${(r + i) % 8}` : `fresh-${w}-${r}-${i % 6}`;
          const transactionId = `t-${w}-${r}-${i}`;
          return { queue: pick(QUEUES), partition, payload: { w, r, i }, transactionId };
        });
        const res = await b.call('POST', '/api/v1/push', { items });
        count(res.status);
        if (res.status === 201) for (const it of items) pushed.add(it.transactionId);
      }
    };
    // Wildcard, multi-partition and discovery pops; each batch acked (some failed: a retry).
    const popper = async (path: () => string, group?: string) => {
      while (Date.now() < deadline + 2_000) {
        const res = await b.call<PopBody>('GET', `/api/v1/pop${path()}`);
        count(res.status);
        if (res.status !== 200) {
          await new Promise((r) => setTimeout(r, 2));
          continue;
        }
        if (Math.random() < 0.2) count((await b.call('POST', `/api/v1/lease/${res.body.leaseId}/extend`, { seconds: 30 })).status);
        const failOne = Math.random() < 0.1;
        const acks = res.body.messages.map((m, i) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: res.body.leaseId,
          status: failOne && i === 0 ? 'failed' : 'completed',
        }));
        const ack = await b.ackBatch(acks, group);
        count(ack.status);
        if (ack.status === 200) {
          ack.body.forEach((a: { success: boolean }, i: number) => {
            if (a.success && acks[i]!.status === 'completed') done.get(group ?? '__QUEUE_MODE__')!.add(acks[i]!.transactionId);
          });
        }
      }
    };
    // The admin side: seek the discovery group to the end of one queue now and then.
    const seeker = async () => {
      while (Date.now() < deadline) {
        count((await b.seek('h', pick(QUEUES), { toEnd: true })).status);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    await Promise.all([
      ...[0, 1, 2, 3].map(pusher),
      ...[0, 1, 2, 3].map(() => popper(() => `/queue/${pick(QUEUES)}?batch=10&partitions=3`)),
      popper(() => `/queue/${pick(QUEUES)}/partition/shared-${Math.floor(Math.random() * 8)}?batch=5`),
      popper(() => '/queue/ns.alpha?batch=7&partitions=2'),
      ...[0, 1].map(() => popper(() => '?namespace=ns&batch=10&partitions=2&consumerGroup=g', 'g')),
      popper(() => '?namespace=ns&batch=4&consumerGroup=h'),
      seeker(),
    ]);
    await load.close();

    const fivexx = [...statuses].filter(([s]) => s >= 500);
    expect(fivexx, `statuses: ${JSON.stringify(Object.fromEntries(statuses))}`).toEqual([]);
    expect(statuses.get(201)).toBeGreaterThan(20);
    expect(statuses.get(200)).toBeGreaterThan(20);
    // Backends report on exit; give the statistics a moment to land.
    let after = await deadlocks();
    for (let i = 0; i < 20 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await deadlocks();
    }
    expect(after - before).toBe(0);

    // Nothing lost: draining each group after the race delivers every pushed message it had not acked.
    const drain = testClient(db());
    for (const [group, seen] of done) {
      for (;;) {
        const path = group === 'g' ? '?namespace=ns&batch=500&partitions=50&consumerGroup=g' : null;
        const polls = path ? [path] : QUEUES.map((q) => `/queue/${q}?batch=500&partitions=50`);
        let got = 0;
        for (const p of polls) {
          const res = await drain.call<PopBody>('GET', `/api/v1/pop${p}`);
          expect(res.status).toBeLessThan(500);
          if (res.status !== 200) continue;
          got += res.body.messages.length;
          for (const m of res.body.messages) seen.add(m.transactionId);
          await drain.ackAll(res.body, 'completed', group === 'g' ? 'g' : undefined);
        }
        if (got === 0) break;
      }
      expect([...pushed].filter((t) => !seen.has(t))).toEqual([]);
    }
  }, 60_000);
});
