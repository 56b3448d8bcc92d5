// Driver conformance: PGlite, node-postgres and the Neon driver hand the broker the same shapes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import type { Database, DriverName } from '../../lib/db/types.js';
import { isDatabaseUnavailable } from '../../lib/http/errors.js';
import { startWsProxy, type WsProxy } from '../../scripts/ws-proxy.js';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

const drivers: DriverName[] = testMode() === 'pg' ? ['pglite', 'pg', 'neon'] : ['pglite'];

describe.each(drivers)('the %s driver', (driver) => {
  let base: TestDatabase;
  let proxy: WsProxy | undefined;
  let db: Database;

  beforeAll(async () => {
    if (driver === 'pglite') {
      db = base = await freshDatabaseFor('pglite');
      return;
    }
    base = await freshDatabase();
    if (driver === 'neon') proxy = await startWsProxy();
    db = await connect({ url: base.url, driver, neonWsProxy: proxy?.address, max: 4 });
    await db.query('CREATE TABLE t (id int PRIMARY KEY, n bigint)');
  });
  afterAll(async () => {
    if (db !== base) await db.close();
    await base.dispose();
    await proxy?.close();
  });

  it('round-trips an empty bytea and a 1 MiB bytea byte for byte', async () => {
    const big = new Uint8Array(1024 * 1024).map((_, i) => (i * 31 + 7) & 0xff);
    const [row] = await db.query<{ a: Uint8Array; b: Uint8Array }>('SELECT $1::bytea AS a, $2::bytea AS b', [new Uint8Array(0), big]);
    expect(row!.a).toBeInstanceOf(Uint8Array);
    expect(row!.a.byteLength).toBe(0);
    expect(row!.b.byteLength).toBe(big.byteLength);
    expect(Buffer.compare(Buffer.from(row!.b), Buffer.from(big))).toBe(0);
  });

  it('passes and returns arrays of bytea', async () => {
    const parts = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new Uint8Array([0, 255, 92, 120])];
    const rows = await db.query<{ i: number; len: number; x: Uint8Array }>(
      'SELECT i::int, length(x) AS len, x FROM unnest($1::bytea[]) WITH ORDINALITY AS u(x, i) ORDER BY i',
      [parts],
    );
    expect(rows.map((r) => r.len)).toEqual([3, 0, 4]);
    expect(rows.map((r) => Array.from(r.x))).toEqual(parts.map((p) => Array.from(p)));
    const [back] = await db.query<{ arr: Uint8Array[] }>("SELECT ARRAY['\\x0102'::bytea, '\\x'::bytea] AS arr");
    expect(back!.arr.map((b) => Array.from(b))).toEqual([[1, 2], []]);
  });

  it('returns int8 beyond 2^53 exactly, as a decimal string, and int8 arrays as strings', async () => {
    const [row] = await db.query<{ a: string; b: string; c: string[] }>(
      'SELECT $1::int8 + 1 AS a, $2::int8 AS b, ARRAY[$1::int8, -1]::int8[] AS c',
      ['9007199254740993', 5],
    );
    expect(row).toEqual({ a: '9007199254740994', b: '5', c: ['9007199254740993', '-1'] });
  });

  it('returns timestamptz as Date and jsonb as values', async () => {
    const [row] = await db.query<{ t: Date; j: unknown }>(
      `SELECT '2026-01-02T03:04:05.678Z'::timestamptz AS t, '{"a":[1,null]}'::jsonb AS j`,
    );
    expect(row!.t).toBeInstanceOf(Date);
    expect(row!.t.toISOString()).toBe('2026-01-02T03:04:05.678Z');
    expect(row!.j).toEqual({ a: [1, null] });
  });

  it('runs an interactive transaction holding a row lock and commits it', async () => {
    await db.query('INSERT INTO queen.queues (name) VALUES ($1)', [`tx-${driver}`]);
    const out = await db.transaction(async (tx) => {
      const [q] = await tx.query<{ id: string; lease_time: number }>('SELECT id, lease_time FROM queen.queues WHERE name = $1 FOR UPDATE', [
        `tx-${driver}`,
      ]);
      await tx.query('UPDATE queen.queues SET lease_time = $2 WHERE id = $1', [q!.id, q!.lease_time + 1]);
      return q!.lease_time;
    });
    const [after] = await db.query<{ lease_time: number }>('SELECT lease_time FROM queen.queues WHERE name = $1', [`tx-${driver}`]);
    expect(after!.lease_time).toBe(out + 1);
  });

  it('rolls back every statement of a transaction that throws', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO queen.queues (name) VALUES ($1)', [`rollback-${driver}`]);
        await tx.query('SELECT 1 / 0');
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await db.query('SELECT 1 FROM queen.queues WHERE name = $1', [`rollback-${driver}`])).toEqual([]);
    // The connection is usable afterwards.
    expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('serialises a concurrent statement behind an open transaction instead of interleaving', async () => {
    if (driver !== 'pglite') {
      // On a pool, a second connection is blocked by the row lock until the first commits.
      await db.query('INSERT INTO t VALUES (1, 0)');
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const first = db.transaction(async (tx) => {
        await tx.query('SELECT * FROM t WHERE id = 1 FOR UPDATE');
        await held;
        await tx.query('UPDATE t SET n = n + 1 WHERE id = 1');
      });
      await new Promise((r) => setTimeout(r, 50));
      const second = db.query('UPDATE t SET n = n * 10 WHERE id = 1 RETURNING n');
      await new Promise((r) => setTimeout(r, 100));
      release();
      await first;
      expect(await second).toEqual([{ n: '10' }]);
      return;
    }
    const order: string[] = [];
    const tx = db.transaction(async (t) => {
      order.push('tx-begin');
      await new Promise((r) => setTimeout(r, 50));
      await t.query('SELECT 1');
      order.push('tx-end');
    });
    const outside = db.query('SELECT 1').then(() => order.push('outside'));
    await Promise.all([tx, outside]);
    expect(order).toEqual(['tx-begin', 'tx-end', 'outside']);
  });
});

async function freshDatabaseFor(_driver: 'pglite'): Promise<TestDatabase> {
  if (testMode() === 'pg') {
    // Still exercise PGlite on the pg run: an in-memory instance migrated from scratch.
    const { connectPglite } = await import('../../lib/db/driver-pglite.js');
    const { migrate } = await import('../../lib/db/migrate.js');
    const db = await connectPglite({});
    await migrate(db);
    await db.query('CREATE TABLE t (id int PRIMARY KEY, n bigint)');
    return Object.assign(db, { url: undefined, dispose: () => db.close() });
  }
  const db = await freshDatabase();
  await db.query('CREATE TABLE t (id int PRIMARY KEY, n bigint)');
  return db;
}

describe.skipIf(testMode() !== 'pg')('a pooled connection whose backend is terminated mid-transaction', () => {
  it.each(['pg', 'neon'] as const)(
    'fails that transaction (%s) with the lost connection, a 503, without crashing the process, and the pool recovers',
    async (driver) => {
      const base = await freshDatabase();
      const proxy = driver === 'neon' ? await startWsProxy() : undefined;
      const db = await connect({ url: base.url, driver, neonWsProxy: proxy?.address, max: 2 });
      const uncaught: unknown[] = [];
      const onUncaught = (e: unknown) => uncaught.push(e);
      process.on('uncaughtException', onUncaught);
      try {
        const err = await db
          .transaction(async (tx) => {
            const [{ pid }] = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
            await base.query('SELECT pg_terminate_backend($1)', [pid]);
            await new Promise((r) => setTimeout(r, 200));
            await tx.query('SELECT 1');
          })
          .then(
            () => null,
            (e: unknown) => e,
          );
        // The loss itself, not the driver's "not queryable" for the statement after it: that one is a 503.
        expect(String((err as Error | null)?.message)).not.toMatch(/not queryable/);
        expect(isDatabaseUnavailable(err)).toBe(true);
        await new Promise((r) => setTimeout(r, 100));
        expect(uncaught).toEqual([]);
        expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        process.off('uncaughtException', onUncaught);
        await db.close();
        await proxy?.close();
        await base.dispose();
      }
    },
  );
});

describe.skipIf(testMode() !== 'pg')('named prepared statements', () => {
  it.each(['pg', 'neon'] as const)(
    '(%s) parse a statement once per connection, and QUEEN_PREPARED_STATEMENTS=off sends it unnamed',
    async (driver) => {
      const base = await freshDatabase();
      const proxy = driver === 'neon' ? await startWsProxy() : undefined;
      const named = (db: Database) =>
        db.query<{ n: string }>(`SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE $1`, ['%-- probe%']);
      try {
        for (const preparedStatements of [true, false]) {
          const db = await connect({ url: base.url, driver, neonWsProxy: proxy?.address, max: 1, preparedStatements });
          for (let i = 0; i < 3; i++) expect(await db.query<{ x: number }>('SELECT $1::int AS x -- probe', [i])).toEqual([{ x: i }]);
          // The same one connection: its statement cache holds the probe once, or not at all.
          expect(await named(db)).toEqual([{ n: preparedStatements ? '1' : '0' }]);
          await db.close();
        }
      } finally {
        await proxy?.close();
        await base.dispose();
      }
    },
  );
});
