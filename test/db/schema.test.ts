import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, migrate, readMigrations } from '../../lib/db/migrate.js';
import { appliedHashes } from '../../lib/db/schema-version.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();

const reloptions = async (table: string) => {
  const [row] = await db().query<{ reloptions: string[] | null }>(`SELECT reloptions FROM pg_class WHERE oid = $1::regclass`, [table]);
  return row?.reloptions ?? [];
};

describe('a freshly migrated database', () => {
  it('tunes the churn tables as docs/storage.md#churn-tuning says', async () => {
    expect(await reloptions('queen.log_partitions')).toEqual(
      expect.arrayContaining([
        'fillfactor=70',
        'autovacuum_vacuum_scale_factor=0',
        'autovacuum_vacuum_threshold=500',
        'vacuum_truncate=off',
      ]),
    );
    expect(await reloptions('queen.log_consumers')).toEqual(
      expect.arrayContaining([
        'fillfactor=50',
        'autovacuum_vacuum_scale_factor=0',
        'autovacuum_vacuum_threshold=500',
        'vacuum_truncate=off',
      ]),
    );
  });

  it('stores segment blobs EXTERNAL so TOAST does not recompress them', async () => {
    const rows = await db().query<{ attstorage: string }>(
      `SELECT attstorage FROM pg_attribute WHERE attrelid = 'queen.log_segments'::regclass AND attname = 'blob'`,
    );
    expect(rows[0]?.attstorage).toBe('e');
  });

  it('has the documented indexes and no secondary index on log_segments', async () => {
    const idx = await db().query<{ tablename: string; indexname: string; indexdef: string }>(
      `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'queen' ORDER BY 1, 2`,
    );
    const names = idx.map((r) => r.indexname);
    expect(names).toContain('queues_tenant_name_uk');
    expect(idx.find((r) => r.indexname === 'idx_log_partitions_queue_write')?.indexdef).toMatch(/\(queue_id, last_write_at\)/);
    expect(idx.filter((r) => r.tablename === 'log_segments').map((r) => r.indexname)).toEqual(['log_segments_pk']);
    expect(idx.find((r) => r.indexname === 'log_segments_pk')?.indexdef).toMatch(/\(partition_id, base_offset\)/);
    expect(idx.find((r) => r.indexname === 'log_consumers_pk')?.indexdef).toMatch(/\(partition_id, consumer_group\)/);
  });

  it('has foreign keys from partitions, segments and cursors but none on log_txns', async () => {
    const fks = await db().query<{ tbl: string; def: string }>(
      `SELECT conrelid::regclass::text AS tbl, pg_get_constraintdef(oid) AS def
         FROM pg_constraint WHERE contype = 'f' AND connamespace = 'queen'::regnamespace`,
    );
    const tables = fks.map((f) => f.tbl);
    expect(tables).toEqual(expect.arrayContaining(['queen.log_partitions', 'queen.log_segments', 'queen.log_consumers', 'queen.log_dlq']));
    expect(tables).not.toContain('queen.log_txns');
    for (const f of fks) expect(f.def).toMatch(/ON DELETE CASCADE/);
  });

  it('starts allocators at -1 and queues with the defaults of an implicit queue', async () => {
    const [q] = await db().query<{ id: string; lease_time: number; dedup_window_seconds: number }>(
      `INSERT INTO queen.queues (name) VALUES ('defaults') RETURNING id, lease_time, dedup_window_seconds`,
    );
    expect(q).toMatchObject({ lease_time: 60, dedup_window_seconds: 3600 });
    const [p] = await db().query<{ last_offset: string; name: string }>(
      `INSERT INTO queen.log_partitions (queue_id) VALUES ($1) RETURNING last_offset, name`,
      [q!.id],
    );
    expect(p).toEqual({ last_offset: '-1', name: 'Default' });
  });

  it('explodes a hash blob into zero-based 16-byte slots with log_unnest_hashes', async () => {
    const blob = new Uint8Array(48).map((_, i) => i);
    const rows = await db().query<{ idx: number; h: Uint8Array }>('SELECT idx, h FROM queen.log_unnest_hashes($1)', [blob]);
    expect(rows.map((r) => r.idx)).toEqual([0, 1, 2]);
    expect(Array.from(rows[2]!.h)).toEqual(Array.from(blob.subarray(32, 48)));
    expect(await db().query('SELECT * FROM queen.log_unnest_hashes($1)', [new Uint8Array(0)])).toEqual([]);
  });

  it("records every migration's hash in order, so deployed functions can refuse an old or other schema", async () => {
    expect(await appliedHashes(db())).toEqual(readMigrations().map((m) => m.hash));
  });

  it('applies nothing when migrated again', async () => {
    expect(await migrate(db())).toBe(0);
  });
});

describe('the Drizzle schema', () => {
  it('matches the migrations: drizzle-kit generate finds nothing to change', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'queen-drift-'));
    try {
      await cp(MIGRATIONS_FOLDER, join(dir, 'drizzle'), { recursive: true });
      const config = join(dir, 'drizzle.config.mjs');
      await writeFile(
        config,
        `export default { dialect: 'postgresql', schema: ${JSON.stringify(join(process.cwd(), 'lib/db/schema.ts'))}, out: './drizzle' };`,
      );
      const before = await readdir(join(dir, 'drizzle'));
      const { stdout, stderr } = await promisify(execFile)(
        join(process.cwd(), 'node_modules/.bin/drizzle-kit'),
        ['generate', '--config', config],
        { cwd: dir },
      );
      expect(stdout + stderr).toMatch(/No schema changes/);
      expect(await readdir(join(dir, 'drizzle'))).toEqual(before);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
