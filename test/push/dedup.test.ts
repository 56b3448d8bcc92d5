import { describe, expect, it } from 'vitest';
import { observe, type StatementLog } from '../../lib/db/client.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { countRows, item, storedMessages } from './helpers.js';

const db = useDatabase();

const push = async (items: unknown[], log?: StatementLog) => {
  const res = await testClient(log ? observe(db(), log) : db()).call('POST', '/api/v1/push', { items });
  expect(res.status).toBe(201);
  return res.body as any[];
};
const lastOffset = async (partitionId: string) =>
  Number((await db().query<{ o: string }>('SELECT last_offset AS o FROM queen.log_partitions WHERE id = $1', [partitionId]))[0]!.o);

describe('deduplication', () => {
  it('queues a key once when it appears twice in one request, and answers the repeat with the original', async () => {
    const out = await push([item('d1', 'a', { transactionId: 'k' }), item('d1', 'b'), item('d1', 'c', { transactionId: 'k' })]);
    expect(out.map((r) => r.status)).toEqual(['queued', 'queued', 'duplicate']);
    expect(out[2]).toMatchObject({
      message_id: out[0].message_id,
      offset: 0,
      partition_id: out[0].partition_id,
      transaction_id: 'k',
      index: 2,
    });
    expect((await storedMessages(db(), 's.partition_id = $1', [out[0].partition_id])).map((m) => m.text)).toEqual(['"a"', '"b"']);
  });

  it('answers a key pushed earlier with the original message id and offset, and writes nothing for it', async () => {
    const first = await push([item('d2', 1, { transactionId: 'order-1' }), item('d2', 2, { transactionId: 'order-2' })]);
    const before = await countRows(db());
    const again = await push([item('d2', 9, { transactionId: 'order-2' }), item('d2', 9, { transactionId: 'order-1' })]);
    expect(again.map((r) => [r.status, r.message_id, r.offset])).toEqual([
      ['duplicate', first[1].message_id, 1],
      ['duplicate', first[0].message_id, 0],
    ]);
    expect(await countRows(db())).toEqual(before);
    expect(await lastOffset(first[0].partition_id)).toBe(1);
  });

  it('allocates no offset for duplicates mixed with new items across partitions', async () => {
    const first = await push([item('d3', 1, { transactionId: 'x', partition: 'p1' })]);
    const log: StatementLog = { statements: [] };
    const out = await push(
      [
        item('d3', 2, { transactionId: 'y', partition: 'p1' }),
        item('d3', 3, { transactionId: 'x', partition: 'p1' }),
        item('d3', 4, { transactionId: 'x', partition: 'p2' }),
        item('d3', 5, { transactionId: 'x', partition: 'p1' }),
        item('d3', 6, { transactionId: 'z', partition: 'p1' }),
      ],
      log,
    );
    expect(out.map((r) => [r.status, r.offset])).toEqual([
      ['queued', 1],
      ['duplicate', 0],
      ['queued', 0],
      ['duplicate', 0],
      ['queued', 2],
    ]);
    expect(out[1].message_id).toBe(first[0].message_id);
    expect(out[3].message_id).toBe(first[0].message_id);
    expect(log.statements).toHaveLength(2);
    const p1 = await storedMessages(db(), 's.partition_id = $1', [first[0].partition_id]);
    expect(p1.map((m) => [m.offset, m.text])).toEqual([
      [0, '1'],
      [1, '2'],
      [2, '6'],
    ]);
  });

  it('costs one statement when every item is a duplicate', async () => {
    await push([item('d4', 1, { transactionId: 'a' }), item('d4', 2, { transactionId: 'b' })]);
    const log: StatementLog = { statements: [] };
    const out = await push([item('d4', 1, { transactionId: 'b' }), item('d4', 1, { transactionId: 'a' })], log);
    expect(out.map((r) => r.status)).toEqual(['duplicate', 'duplicate']);
    expect(log.statements).toHaveLength(1);
  });

  it('catches a client transactionId equal to a message id the broker minted earlier', async () => {
    const first = await push([item('d10', 1)]);
    const again = await push([item('d10', 2, { transactionId: first[0].message_id })]);
    expect(again[0]).toMatchObject({
      status: 'duplicate',
      offset: 0,
      message_id: first[0].message_id,
      transaction_id: first[0].message_id,
    });
  });

  it('treats the same key on another partition as new', async () => {
    const a = await push([item('d5', 1, { transactionId: 'same', partition: 'a' })]);
    const b = await push([item('d5', 1, { transactionId: 'same', partition: 'b' })]);
    expect(a[0].status).toBe('queued');
    expect(b[0].status).toBe('queued');
  });

  it('queues a key again once its original left the dedup window', async () => {
    const first = await push([item('d6', 1, { transactionId: 'late' })]);
    await db().query(`UPDATE queen.queues SET dedup_window_seconds = 60 WHERE name = 'd6'`);
    await db().query(`UPDATE queen.log_txns SET created_at = created_at - interval '61 seconds' WHERE partition_id = $1`, [
      first[0].partition_id,
    ]);
    const again = await push([item('d6', 2, { transactionId: 'late' })]);
    expect(again[0]).toMatchObject({ status: 'queued', offset: 1 });
    await db().query(
      `UPDATE queen.log_txns SET created_at = created_at - interval '30 seconds' WHERE partition_id = $1 AND base_offset = 1`,
      [first[0].partition_id],
    );
    expect((await push([item('d6', 3, { transactionId: 'late' })]))[0]).toMatchObject({ status: 'duplicate', offset: 1 });
  });

  it('holds each queue to its own window when one request spans queues with different windows', async () => {
    await push([item('w-long', 0, { transactionId: 'a0' })]);
    const b = await push([item('w-short', 0, { transactionId: 'k' })]);
    await db().query(`UPDATE queen.queues SET dedup_window_seconds = 60 WHERE name = 'w-short'`);
    await db().query(`UPDATE queen.log_txns SET created_at = created_at - interval '120 seconds' WHERE partition_id = $1`, [
      b[0].partition_id,
    ]);
    const log: StatementLog = { statements: [] };
    const out = await push([item('w-long', 1, { transactionId: 'a1' }), item('w-short', 1, { transactionId: 'k' })], log);
    expect(out.map((r) => [r.status, r.offset])).toEqual([
      ['queued', 1],
      ['queued', 1],
    ]);
    expect(log.statements).toHaveLength(1);
    const again = await push([item('w-short', 2, { transactionId: 'k' }), item('w-long', 2, { transactionId: 'a0' })]);
    expect(again.map((r) => [r.status, r.offset])).toEqual([
      ['duplicate', 1],
      ['duplicate', 0],
    ]);
  });

  it('with dedupWindowSeconds 0 skips the probe but still writes every hash', async () => {
    await push([item('d7', 0)]);
    await db().query(`UPDATE queen.queues SET dedup_window_seconds = 0 WHERE name = 'd7'`);
    const a = await push([item('d7', 1, { transactionId: 'k' })]);
    const b = await push([item('d7', 2, { transactionId: 'k' }), item('d7', 3, { transactionId: 'k' })]);
    expect([...a, ...b].map((r) => [r.status, r.offset])).toEqual([
      ['queued', 1],
      ['queued', 2],
      ['queued', 3],
    ]);
    const stored = await storedMessages(db(), 's.partition_id = $1', [a[0].partition_id]);
    expect(stored.map((m) => m.text)).toEqual(['0', '1', '2', '3']);
    const [h] = await db().query<{ n: number }>('SELECT sum(length(hashes))::int / 16 AS n FROM queen.log_txns WHERE partition_id = $1', [
      a[0].partition_id,
    ]);
    expect(h!.n).toBe(4);
  });

  it('answers message_id null but the offset when retention deleted the original segment', async () => {
    const first = await push([item('d8', 1, { transactionId: 'gone' })]);
    await db().query('DELETE FROM queen.log_segments WHERE partition_id = $1', [first[0].partition_id]);
    const again = await push([item('d8', 1, { transactionId: 'gone' })]);
    expect(again[0]).toMatchObject({ status: 'duplicate', message_id: null, offset: 0 });
  });

  it('finds a duplicate among many stored hashes through the GIN index on the sidecar', async () => {
    const first = await push([item('d9', 1, { transactionId: 'needle' })]);
    const pid = first[0].partition_id;
    await db().query(
      `INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
       SELECT $1, 1000 + r * 100, 1099 + r * 100, now(),
              (SELECT string_agg(decode(md5(r || ':' || i), 'hex'), ''::bytea) FROM generate_series(0, 99) i)
         FROM generate_series(0, 199) r`,
      [pid],
    );
    await db().query('UPDATE queen.log_partitions SET last_offset = 100000 WHERE id = $1', [pid]);
    const out = await push([item('d9', 2, { transactionId: 'hay' }), item('d9', 3, { transactionId: 'needle' })]);
    expect(out.map((r) => [r.status, r.offset])).toEqual([
      ['queued', 100001],
      ['duplicate', 0],
    ]);
    const idx = await db().query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_log_txns_keys'`);
    expect(idx[0]!.indexdef).toMatch(/USING gin \(COALESCE\(keys, queen\.log_txn_keys64\(partition_id, hashes\)\)\)/);
  });

  it('decides on the full 128-bit hash: a stored hash sharing only the 64-bit index key is not a duplicate', async () => {
    const first = await push([item('twin-keys', 1, { transactionId: 'twin' })]);
    const pid = first[0].partition_id;
    // A sidecar row whose hash has twin's first 8 bytes (so the same index key) and other last 8.
    await db().query(
      `INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
       SELECT $1, 500, 500, now(), substring(t.hashes FROM 1 FOR 8) || decode('00112233445566ff', 'hex')
         FROM queen.log_txns t WHERE t.partition_id = $1 AND t.base_offset = 0`,
      [pid],
    );
    const [keys] = await db().query<{ same: boolean }>(
      `SELECT (SELECT queen.log_txn_keys64(partition_id, hashes) FROM queen.log_txns WHERE partition_id = $1 AND base_offset = 0)
            = (SELECT queen.log_txn_keys64(partition_id, hashes) FROM queen.log_txns WHERE partition_id = $1 AND base_offset = 500) AS same`,
      [pid],
    );
    expect(keys!.same).toBe(true);
    await db().query('UPDATE queen.log_partitions SET last_offset = 500 WHERE id = $1', [pid]);
    await db().query('DELETE FROM queen.log_txns WHERE partition_id = $1 AND base_offset = 0', [pid]);
    const out = await push([item('twin-keys', 2, { transactionId: 'twin' })]);
    expect(out.map((r) => r.status)).toEqual(['queued']);
  });
});
