// The sidecar's stored dedup keys (docs/storage.md#the-duplicate-probe), and a deploy where the
// previous release's push (11 parameters, no keys) runs beside this one on the same database.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/types.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { item } from './helpers.js';

const db = useDatabase();

// The previous release's statement: the same parameters by position, without the last one, the keys.
const PREVIOUS_PUSH_SQL = 'SELECT * FROM queen.push_segments($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)';
const previousRelease = (d: Database): Database => ({
  ...d,
  query: (text, params) =>
    text.includes('queen.push_segments(') ? d.query(PREVIOUS_PUSH_SQL, params?.slice(0, 11)) : d.query(text, params),
});

const push = async (items: unknown[], via: Database = db()) => {
  const res = await testClient(via).call('POST', '/api/v1/push', { items });
  expect(res.status).toBe(201);
  return res.body as any[];
};

const keysOf = (partitionId: string) =>
  db().query<{ stored: string[] | null; computed: string[] }>(
    `SELECT keys AS stored, queen.log_txn_keys64(partition_id, hashes) AS computed
       FROM queen.log_txns WHERE partition_id = $1 ORDER BY base_offset`,
    [partitionId],
  );

describe('stored dedup keys', () => {
  it('stores with every sidecar row the keys the index function would compute, with or without transactionIds', async () => {
    const a = await push([item('keys-1', 1), item('keys-1', 2, { transactionId: 't-2' }), item('keys-1', 3, { partition: 'p' })]);
    const b = await push([item('keys-1', 4)]);
    for (const pid of new Set([...a, ...b].map((r) => r.partition_id))) {
      const rows = await keysOf(pid);
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.stored).toEqual(r.computed);
    }
  });

  it('finds a duplicate in a row stored without keys, as rows written before the keys were stored are', async () => {
    const first = await push([item('keys-2', 1, { transactionId: 'old-row' })]);
    await db().query('UPDATE queen.log_txns SET keys = NULL WHERE partition_id = $1', [first[0].partition_id]);
    const again = await push([item('keys-2', 2, { transactionId: 'old-row' })]);
    expect(again[0]).toMatchObject({ status: 'duplicate', offset: 0, message_id: first[0].message_id });
  });

  it("deduplicates a previous release's push against this release's rows, and this release's against its rows", async () => {
    const ours = await push([item('keys-3', 1, { transactionId: 'new-first' })]);
    const theirs = await push(
      [item('keys-3', 2, { transactionId: 'new-first' }), item('keys-3', 3, { transactionId: 'old-first' })],
      previousRelease(db()),
    );
    expect(theirs.map((r) => [r.status, r.offset])).toEqual([
      ['duplicate', 0],
      ['queued', 1],
    ]);
    expect(theirs[0].message_id).toBe(ours[0].message_id);
    const again = await push([item('keys-3', 4, { transactionId: 'old-first' })]);
    expect(again[0]).toMatchObject({ status: 'duplicate', offset: 1, message_id: theirs[1].message_id });
    // The previous release's rows carry keys too (computed in SQL), so they need no function either.
    for (const r of await keysOf(ours[0].partition_id)) expect(r.stored).toEqual(r.computed);
  });

  it("allocates offsets in order for a previous release's pushes to a new queue and then to its partition", async () => {
    const first = await push([item('keys-4', 1)], previousRelease(db()));
    const second = await push([item('keys-4', 2)], previousRelease(db()));
    expect([first[0].offset, second[0].offset]).toEqual([0, 1]);
    expect(second[0].partition_id).toBe(first[0].partition_id);
  });
});
