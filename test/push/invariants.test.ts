// The storage invariants (docs/storage.md#invariants) under real concurrency: PostgreSQL only
// (PGlite is one connection).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pushItems } from '../../lib/broker/push.js';
import { parsePushItems } from '../../lib/http/requests/push.js';
import { readConfig } from '../../lib/config.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { item } from './helpers.js';

const config = readConfig({}, { auth: 'none' });
const ctx = { tenant: 'default', sub: null, config };

describe.skipIf(testMode() !== 'pg')('push invariants on the real server', () => {
  const db = useDatabase({ max: 40 });

  const push = (items: unknown[]) => pushItems(db(), ctx, parsePushItems(items, config));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  // A connection of its own with an error listener: pool clients emit 'error' when their backend is
  // terminated, which would surface as an unhandled error (see the report on lib/db/driver-pg.ts).
  async function ownConnection() {
    const client = new pg.Client({ connectionString: db().url });
    client.on('error', () => {});
    await client.connect();
    const q = { query: async (text: string, params?: readonly unknown[]) => (await client.query(text, params as unknown[])).rows };
    return { client, q, end: () => client.end().catch(() => {}) };
  }

  // The killed push rejects while the test is still busy elsewhere: take its outcome at once, so the
  // rejection is never momentarily unhandled.
  const settle = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => 'resolved',
      (err: unknown) => err,
    );

  async function backendWaiting(): Promise<number> {
    for (let i = 0; i < 200; i++) {
      const rows = await db().query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%push_segments%' AND wait_event_type = 'Lock'`,
      );
      if (rows[0]) return rows[0].pid;
      await sleep(25);
    }
    throw new Error('the push never waited on the partition lock');
  }

  it('gives concurrent pushers to one partition disjoint, gap-free, monotone ranges with created_at in offset order', async () => {
    const { call } = testClient(db);
    const pushers = Array.from({ length: 24 }, (_, p) =>
      (async () => {
        const out = [];
        for (let r = 0; r < 5; r++) {
          const res = await call('POST', '/api/v1/push', {
            items: Array.from({ length: 1 + ((p + r) % 7) }, (_, i) => item('hot', `${p}-${r}-${i}`)),
          });
          expect(res.status).toBe(201);
          out.push(res.body.map((x: any) => x.offset));
        }
        return out;
      })(),
    );
    const ranges = (await Promise.all(pushers)).flat();
    for (const offs of ranges) expect(offs).toEqual(offs.map((_: number, i: number) => offs[0] + i));
    const all = ranges.flat().sort((a, b) => a - b);
    expect(all).toEqual(all.map((_, i) => i));

    const segs = await db().query<{ base_offset: string; end_offset: string; created_at: Date }>(
      `SELECT s.base_offset, s.end_offset, s.created_at FROM queen.log_segments s
         JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'hot' ORDER BY s.base_offset`,
    );
    expect(segs).toHaveLength(ranges.length);
    for (let i = 1; i < segs.length; i++) {
      expect(Number(segs[i]!.base_offset)).toBe(Number(segs[i - 1]!.end_offset) + 1);
      expect(segs[i]!.created_at.getTime()).toBeGreaterThanOrEqual(segs[i - 1]!.created_at.getTime());
    }
  });

  it('queues exactly one of many concurrent pushes of one key', async () => {
    for (let round = 0; round < 3; round++) {
      const key = `race-${round}`;
      const { call } = testClient(db);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call('POST', '/api/v1/push', {
            items: [item('race', i, { transactionId: key }), item('race', i, { transactionId: `${key}-own-${i}` })],
          }),
        ),
      );
      const verdicts = results.map((r) => r.body[0]);
      expect(verdicts.filter((v) => v.status === 'queued')).toHaveLength(1);
      const winner = verdicts.find((v) => v.status === 'queued');
      for (const v of verdicts) expect([v.message_id, v.offset]).toEqual([winner.message_id, winner.offset]);
      expect(results.every((r) => r.body[1].status === 'queued')).toBe(true);
    }
  });

  it('never deadlocks two multi-partition pushes that name the partitions in opposite orders', async () => {
    const parts = Array.from({ length: 6 }, (_, i) => `p${i}`);
    await push(parts.map((p) => item('cross', 0, { partition: p })));
    const forward = parts.map((p) => item('cross', 1, { partition: p }));
    const backward = [...forward].reverse();
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => push(i % 2 ? forward : backward)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const rows = await db().query<{ last_offset: string }>(
      `SELECT p.last_offset FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'cross'`,
    );
    expect(rows.map((r) => Number(r.last_offset))).toEqual(parts.map(() => 40));
  });

  it('leaves no hole when a push is killed while waiting on the partition lock', async () => {
    await push([item('killed', 0)]);
    const holder = new pg.Client({ connectionString: db().url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(
      `SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'killed' FOR UPDATE OF p`,
    );
    const own = await ownConnection();
    const victim = settle(pushItems(own.q, ctx, parsePushItems([item('killed', 1)], config)));
    const pid = await backendWaiting();
    await db().query('SELECT pg_terminate_backend($1)', [pid]);
    expect(await victim).toBeInstanceOf(Error);
    await own.end();
    await holder.query('COMMIT');
    await holder.end();
    expect((await push([item('killed', 2)]))[0]!.offset).toBe(1);
  });

  it('leaves no hole when the connection dies after the offsets were allocated but before commit', async () => {
    await push([item('killed-late', 0)]);
    const { client, q: tx, end } = await ownConnection();
    let allocated: number[] = [];
    const victim = settle(
      (async () => {
        await client.query('BEGIN');
        const out = await pushItems(tx, ctx, parsePushItems([item('killed-late', 1), item('killed-late', 2)], config));
        allocated = out.map((r) => r.offset);
        await client.query(`SELECT pg_sleep(30) /* killed-late */`);
      })(),
    );
    let pid: number | undefined;
    for (let i = 0; i < 200 && !pid; i++) {
      const rows = await db().query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(30) /* killed' || '-late%' AND pid <> pg_backend_pid()`,
      );
      pid = rows[0]?.pid;
      if (!pid) await sleep(25);
    }
    await db().query('SELECT pg_terminate_backend($1)', [pid]);
    expect(await victim).toBeInstanceOf(Error);
    expect(allocated).toEqual([1, 2]);
    await end();
    const next = await push([item('killed-late', 3)]);
    expect(next[0]!.offset).toBe(1);
    const [seg] = await db().query<{ n: string }>(
      `SELECT count(*) AS n FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'killed-late'`,
    );
    expect(Number(seg!.n)).toBe(2);
  });

  it('provisions a new queue once when many first pushes race for it', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => push([item('brand-new.race', i, { partition: `p${i % 3}` })])));
    expect(results.flat().every((r) => r.status === 'queued')).toBe(true);
    const [q] = await db().query<{ queues: string; partitions: string }>(
      `SELECT count(DISTINCT q.id) AS queues, count(p.id) AS partitions FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id WHERE q.name = 'brand-new.race'`,
    );
    expect(q).toEqual({ queues: '1', partitions: '3' });
  });

  it('provisions the queue again when it is deleted while a push waits for its partition', async () => {
    await push([item('deleted-midway', 0)]);
    const holder = new pg.Client({ connectionString: db().url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(
      `SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'deleted-midway' FOR UPDATE OF p`,
    );
    const waiting = push([item('deleted-midway', 1)]);
    await backendWaiting();
    await holder.query(`DELETE FROM queen.queues WHERE name = 'deleted-midway'`);
    await holder.query('COMMIT');
    await holder.end();
    const out = await waiting;
    expect(out[0]).toMatchObject({ status: 'queued', offset: 0 });
    const [row] = await db().query<{ n: string }>(`SELECT count(*) AS n FROM queen.queues WHERE name = 'deleted-midway'`);
    expect(row!.n).toBe('1');
  });

  it('changes the partition row last_write_at at most every 100 ms', async () => {
    const seen: number[] = [];
    const until = Date.now() + 800;
    while (Date.now() < until) {
      const out = await push([item('quantized', 1)]);
      const [row] = await db().query<{ t: Date }>('SELECT last_write_at AS t FROM queen.log_partitions WHERE id = $1', [
        out[0]!.partition_id,
      ]);
      if (seen.at(-1) !== row!.t.getTime()) seen.push(row!.t.getTime());
    }
    // Several stamps in 800 ms (the wildcard scan's slack is this quantum), none closer than 100 ms.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!).toBeGreaterThanOrEqual(100);
  });
});
