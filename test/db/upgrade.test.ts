// Upgrades: a database migrated with the first landed migrations (test/db/fixtures/drizzle-a107141)
// is brought to today's SQL by migrating; a database holding SQL this version does not know is
// refused loudly, by migrate() and by the deployed functions' schema check.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MigrationError, migrateWithReport, readMigrations } from '../../lib/db/migrate.js';
import { dumpSchema } from '../../lib/db/schema-dump.js';

// Function bodies included: an upgraded database must run the same SQL as a fresh one.
const FULL = { functions: 'full' } as const;
import { appliedHashes } from '../../lib/db/schema-version.js';
import { schemaGuard } from '../../lib/http/runtime/database.js';
import { testClient } from '../support/client.js';
import { emptyDatabase, freshDatabase, type TestDatabase } from '../support/db.js';

const FIRST_LANDED = fileURLToPath(new URL('./fixtures/drizzle-a107141', import.meta.url));
const today = readMigrations();
const bookkeeping = (db: TestDatabase) =>
  db.query<{ hash: string; created_at: string }>('SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id');

let fresh: TestDatabase;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(() => fresh.dispose());

describe('a database migrated with the first landed migrations (a107141)', () => {
  let old: TestDatabase;
  beforeAll(async () => {
    old = await emptyDatabase();
    expect(await migrate(old, FIRST_LANDED)).toBe(5);
    // Rows made before the upgrade: a queue, a partition, a group's cursor and subscription.
    const [q] = await old.query<{ id: string }>("INSERT INTO queen.queues (name) VALUES ('legacy') RETURNING id");
    const [p] = await old.query<{ id: string }>('INSERT INTO queen.log_partitions (queue_id) VALUES ($1) RETURNING id', [q!.id]);
    await old.query("INSERT INTO queen.log_consumers (partition_id, consumer_group) VALUES ($1, 'billing')", [p!.id]);
    await old.query("INSERT INTO queen.consumer_subscriptions (queue_id, consumer_group, mode) VALUES ($1, 'billing', 'all')", [q!.id]);
  });
  afterAll(() => old.dispose());

  it('is refused by a deployed function as outdated, naming the stale migrations', async () => {
    const refused = schemaGuard()(old);
    await expect(refused).rejects.toMatchObject({ status: 503, code: 'schema_outdated' });
    await expect(refused).rejects.toThrow(/earlier versions of 0000_log_schema \(from commit a107141\).*Run the migrations/);
  });

  it("is brought up to date by migrating: today's tables, columns, indexes, constraints, triggers and functions", async () => {
    expect(await migrateWithReport(old)).toEqual({
      // The first landed set had five migrations: everything after them is simply applied.
      applied: today.slice(5).map((m) => m.tag),
      repaired: ['0000_log_schema', '0002_push_functions', '0003_pop_ack_functions', '0004_admin_functions'],
      ahead: 0,
    });
    expect(await dumpSchema(old, FULL)).toBe(await dumpSchema(fresh, FULL));
    // The bookkeeping is today's too, so drizzle-kit migrate and the schema check agree with it.
    expect(await bookkeeping(old)).toEqual(await bookkeeping(fresh));
    await expect(schemaGuard()(old)).resolves.toBeUndefined();
    expect(await migrateWithReport(old)).toEqual({ applied: [], repaired: [], ahead: 0 });
  });

  it('keeps its rows, gives the cursors made before the upgrade their queue, and serves push, pop and ack', async () => {
    expect(
      await old.query(
        'SELECT c.queue_id = p.queue_id AS filled, c.pending FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id',
      ),
    ).toEqual([{ filled: true, pending: true }]);
    const { call } = testClient(old);
    expect(
      (await call('POST', '/api/v1/push', { items: [{ queue: 'legacy', transactionId: 'after-upgrade', payload: { n: 1 } }] })).status,
    ).toBe(201);
    const popped = await call('GET', '/api/v1/pop/queue/legacy?consumerGroup=billing');
    expect(popped.status).toBe(200);
    expect(popped.body.messages.map((m: { transactionId: string }) => m.transactionId)).toEqual(['after-upgrade']);
    const [message] = popped.body.messages;
    const acked = await call('POST', '/api/v1/ack', {
      transactionId: 'after-upgrade',
      partitionId: message.partitionId,
      leaseId: popped.body.leaseId,
      status: 'completed',
      consumerGroup: 'billing',
    });
    expect(acked.body).toMatchObject([{ success: true, committed: true }]);
  });
});

describe('a database whose applied SQL this version does not know', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.dispose());

  it('refuses to migrate, naming the migration, the expected and the found hash and what to do, and changes nothing', async () => {
    const tampered = 'f'.repeat(64);
    await db.query(
      'UPDATE drizzle.__drizzle_migrations SET hash = $1 WHERE id = (SELECT id FROM drizzle.__drizzle_migrations ORDER BY id OFFSET 2 LIMIT 1)',
      [tampered],
    );
    const before = await dumpSchema(db, FULL);
    const refused = migrate(db);
    await expect(refused).rejects.toThrow(MigrationError);
    await expect(refused).rejects.toThrow(
      `Migration 3 of drizzle.__drizzle_migrations should be ${today[2]!.tag} (sha256 ${today[2]!.hash}) but the database applied sha256 ${tampered}`,
    );
    await expect(refused).rejects.toThrow(/Nothing was changed\. Migrate it with the version/);
    expect((await appliedHashes(db))?.[2]).toBe(tampered);
    expect(await dumpSchema(db, FULL)).toBe(before);

    const guard = schemaGuard()(db);
    await expect(guard).rejects.toMatchObject({ status: 503, code: 'schema_mismatch' });
    await expect(guard).rejects.toThrow(today[2]!.tag);
    await db.query('UPDATE drizzle.__drizzle_migrations SET hash = $1 WHERE hash = $2', [today[2]!.hash, tampered]);
  });

  it("is refused by a deployed function as outdated while this version's newest migration is not applied", async () => {
    const [newest] = await db.query<{ hash: string; created_at: string }>(
      'DELETE FROM drizzle.__drizzle_migrations WHERE id = (SELECT max(id) FROM drizzle.__drizzle_migrations) RETURNING hash, created_at',
    );
    try {
      const guard = schemaGuard()(db);
      await expect(guard).rejects.toMatchObject({ status: 503, code: 'schema_outdated' });
      await expect(guard).rejects.toThrow(
        `The database schema is at migration ${today.at(-2)!.tag} but this function needs ${today.at(-1)!.tag}. Run the migrations`,
      );
    } finally {
      await db.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [newest!.hash, newest!.created_at]);
    }
    await expect(schemaGuard()(db)).resolves.toBeUndefined();
  });

  it('migrates nothing on a database a newer version migrated further (a rollback), which deployed functions still serve', async () => {
    await db.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, 9999999999999)', ['e'.repeat(64)]);
    await expect(migrateWithReport(db)).resolves.toEqual({ applied: [], repaired: [], ahead: 1 });
    // The deploy migrates before it updates the functions: the old ones keep serving meanwhile.
    await expect(schemaGuard()(db)).resolves.toBeUndefined();
  });
});
