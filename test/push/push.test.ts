import { describe, expect, it } from 'vitest';
import { pushItems } from '../../lib/broker/push.js';
import { parsePushItems } from '../../lib/http/requests/push.js';
import { readConfig } from '../../lib/config.js';
import { observe, type StatementLog } from '../../lib/db/client.js';
import type { PushResult } from '../../client/src/wire.js';
import { testClient, wireKeys } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { countRows, item, storedMessages } from './helpers.js';

const db = useDatabase();

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const config = readConfig({}, { auth: 'none' });

describe('POST /api/v1/push', () => {
  it('answers 201 with one entry per item in the shape of docs/api.md#push and stores one segment per partition', async () => {
    const { call } = testClient(db);
    const trace = '0193a5b2-0000-4000-8000-000000000001';
    const res = await call<PushResult[]>('POST', '/api/v1/push', {
      items: [
        item('shape', { n: 1 }, { partition: 'p1', transactionId: 'order-1', traceId: trace }),
        item('shape', { n: 2 }, { partition: 'p2' }),
        item('shape', { n: 3 }, { partition: 'p1' }),
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toHaveLength(3);
    const [a, b, c] = res.body as [PushResult, PushResult, PushResult];
    expect(Object.keys(a).sort()).toEqual(
      wireKeys<PushResult>()(['index', 'message_id', 'offset', 'partition_id', 'queueName', 'status', 'trace_id', 'transaction_id']),
    );
    expect(a).toMatchObject({ index: 0, status: 'queued', transaction_id: 'order-1', trace_id: trace, queueName: 'shape', offset: 0 });
    expect(b).toMatchObject({ index: 1, status: 'queued', trace_id: null, offset: 0 });
    expect(c).toMatchObject({ index: 2, status: 'queued', offset: 1, partition_id: a.partition_id });
    expect(typeof a.partition_id).toBe('string');
    expect(b.partition_id).not.toBe(a.partition_id);
    for (const r of res.body) expect(r.message_id).toMatch(UUID7);
    expect(b.transaction_id).toBe(b.message_id);

    const segs = await db().query<{ partition_id: string; base_offset: string; end_offset: string }>(
      `SELECT s.partition_id, s.base_offset, s.end_offset FROM queen.log_segments s JOIN queen.log_txns t USING (partition_id, base_offset)
        WHERE t.end_offset = s.end_offset AND t.created_at = s.created_at AND s.partition_id IN ($1, $2) ORDER BY 1`,
      [a.partition_id, b.partition_id],
    );
    expect(segs).toEqual(
      [
        { partition_id: a.partition_id, base_offset: '0', end_offset: '1' },
        { partition_id: b.partition_id, base_offset: '0', end_offset: '0' },
      ].sort((x, y) => Number(x.partition_id) - Number(y.partition_id)),
    );
  });

  it('stores the frames with flags, ids, producer sub and payload bytes exactly as sent', async () => {
    const { call } = testClient(db, { as: { sub: 'alice@example', role: 'read-write' } });
    const trace = '0193A5B2-0000-4000-8000-0000000000FF';
    const payloads = [
      '{"big":12345678901234567890123,"f":1.0}',
      '[ 1 ,\n 2 ]',
      'null',
      '{}',
      '"h\\u00e9 \\"x\\""',
      '-0.0e-0',
      '{"text":"日本 😀 ü"}',
    ];
    const body = `{"items":[${payloads.map((p, i) => `{"queue":"verbatim","payload":${p},"transactionId":"t${i}"${i === 0 ? `,"traceId":"${trace}"` : ''},"producerSub":"mallory"}`).join(',')}]}`;
    const res = await call('POST', '/api/v1/push', body);
    expect(res.status).toBe(201);
    const stored = await storedMessages(db(), 's.partition_id = $1', [res.body[0].partition_id]);
    expect(stored.map((m) => m.text)).toEqual(payloads);
    expect(stored.map((m) => m.transactionId)).toEqual(payloads.map((_, i) => `t${i}`));
    expect(stored.map((m) => m.messageId)).toEqual(res.body.map((r: any) => r.message_id));
    expect(stored.map((m) => m.offset)).toEqual(res.body.map((r: any) => r.offset));
    expect(stored[0]!.traceId).toBe(trace.toLowerCase());
    expect(stored[1]!.traceId).toBeNull();
    expect(stored.every((m) => m.producerSub === 'alice@example' && !m.encrypted)).toBe(true);
    const hashes = await db().query<{ hashes: Uint8Array }>('SELECT hashes FROM queen.log_txns WHERE partition_id = $1', [
      res.body[0].partition_id,
    ]);
    const { hashTransactionIds } = await import('../../lib/codec/xxh3.js');
    expect(Array.from(hashes[0]!.hashes)).toEqual(Array.from(hashTransactionIds(payloads.map((_, i) => `t${i}`))));
  });

  it('mints message ids that increase in item order, like the offsets', async () => {
    const { call } = testClient(db);
    const res = await call('POST', '/api/v1/push', { items: Array.from({ length: 50 }, (_, i) => item('mono', i)) });
    const ids = res.body.map((r: any) => r.message_id);
    expect([...ids].sort()).toEqual(ids);
    expect(res.body.map((r: any) => r.offset)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('provisions queue and partition with the implicit defaults and derives namespace and task', async () => {
    const { call } = testClient(db);
    await call('POST', '/api/v1/push', { items: [item('billing.invoices.eu', 1), item('plain', 2), item('.odd', 3)] });
    const rows = await db().query<Record<string, unknown>>(
      `SELECT name, namespace, task, lease_time, dedup_window_seconds, tenant_id FROM queen.queues WHERE name IN ('billing.invoices.eu', 'plain', '.odd') ORDER BY name`,
    );
    expect(rows).toEqual([
      { name: '.odd', namespace: null, task: 'odd', lease_time: 60, dedup_window_seconds: 3600, tenant_id: 'default' },
      {
        name: 'billing.invoices.eu',
        namespace: 'billing',
        task: 'invoices.eu',
        lease_time: 60,
        dedup_window_seconds: 3600,
        tenant_id: 'default',
      },
      { name: 'plain', namespace: null, task: null, lease_time: 60, dedup_window_seconds: 3600, tenant_id: 'default' },
    ]);
    const parts = await db().query<{ name: string }>(
      `SELECT p.name FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'plain'`,
    );
    expect(parts).toEqual([{ name: 'Default' }]);
  });

  it('stores queue and partition names with array-syntax characters exactly', async () => {
    const queue = 'we{ird}, "q" \\ é NULL';
    const partition = '{a,b} "x" \\';
    const res = await testClient(db).call('POST', '/api/v1/push', {
      items: [item(queue, 1, { partition }), item('NULL', 2, { partition: 'NULL' })],
    });
    expect(res.status).toBe(201);
    const rows = await db().query<{ q: string; p: string }>(
      `SELECT q.name AS q, p.name AS p FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id WHERE p.id IN ($1, $2) ORDER BY p.id = $1 DESC`,
      [res.body[0].partition_id, res.body[1].partition_id],
    );
    expect(rows).toEqual([
      { q: queue, p: partition },
      { q: 'NULL', p: 'NULL' },
    ]);
  });

  it('keeps tenants apart: the same queue name in two tenants is two queues', async () => {
    const as = (tenant: string) => testClient(db, { authenticate: async () => ({ tenant, sub: null, role: 'read-write' }) });
    const a = await as('tenant-a').call('POST', '/api/v1/push', { items: [item('shared', 1, { transactionId: 'k' })] });
    const b = await as('tenant-b').call('POST', '/api/v1/push', { items: [item('shared', 2, { transactionId: 'k' })] });
    expect(a.body[0]).toMatchObject({ status: 'queued', offset: 0 });
    expect(b.body[0]).toMatchObject({ status: 'queued', offset: 0 });
    expect(b.body[0].partition_id).not.toBe(a.body[0].partition_id);
    const rows = await db().query(`SELECT tenant_id FROM queen.queues WHERE name = 'shared' ORDER BY 1`);
    expect(rows).toEqual([{ tenant_id: 'tenant-a' }, { tenant_id: 'tenant-b' }]);
  });

  it('answers 201 [] to an empty items array and writes nothing', async () => {
    const before = await countRows(db());
    const res = await testClient(db).call('POST', '/api/v1/push', { items: [] });
    expect(res).toMatchObject({ status: 201, body: [] });
    expect(await countRows(db())).toEqual(before);
  });

  it('refuses a read-only principal with 403', async () => {
    const app = testClient(db, { as: { role: 'read-only' } });
    const res = await app.call('POST', '/api/v1/push', { items: [item('ro', 1)] });
    expect(res.status).toBe(403);
  });
});

describe('one round trip', () => {
  it('sends exactly one statement for a multi-partition push without duplicates', async () => {
    await testClient(db).call('POST', '/api/v1/push', { items: [item('rt', 0, { partition: 'a' }), item('rt', 0, { partition: 'b' })] });
    const log: StatementLog = { statements: [] };
    const { call } = testClient(observe(db(), log));
    const res = await call('POST', '/api/v1/push', {
      items: [item('rt', 1, { partition: 'a' }), item('rt', 2, { partition: 'b' }), item('rt', 3, { partition: 'a' })],
    });
    expect(res.status).toBe(201);
    expect(log.statements).toHaveLength(1);
    expect(log.statements[0]).toMatch(/queen\.push_segments/);
  });

  it('sends one statement even when the queue and partitions do not exist yet', async () => {
    const log: StatementLog = { statements: [] };
    const res = await testClient(observe(db(), log)).call('POST', '/api/v1/push', {
      items: [item('rt-new', 1), item('rt-new2', 2, { partition: 'x' })],
    });
    expect(res.status).toBe(201);
    expect(log.statements).toHaveLength(1);
  });

  it('sends two statements when an item is a duplicate of an earlier push', async () => {
    await testClient(db).call('POST', '/api/v1/push', { items: [item('rt-dup', 1, { transactionId: 'once' })] });
    const log: StatementLog = { statements: [] };
    const res = await testClient(observe(db(), log)).call('POST', '/api/v1/push', {
      items: [item('rt-dup', 1, { transactionId: 'once' }), item('rt-dup', 2, { transactionId: 'new' })],
    });
    expect(res.body.map((r: any) => r.status)).toEqual(['duplicate', 'queued']);
    expect(log.statements).toHaveLength(2);
  });
});

describe('pushItems', () => {
  it('writes inside a caller transaction and rolls back with it', async () => {
    const items = parsePushItems([item('in-tx', 1), item('in-tx', 2)], config);
    const before = await countRows(db());
    await expect(
      db().transaction(async (tx) => {
        const out = await pushItems(tx, { tenant: 'default', sub: null, config }, items);
        expect(out.map((r) => r.offset)).toEqual([0, 1]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await countRows(db())).toEqual(before);
    const committed = await db().transaction((tx) => pushItems(tx, { tenant: 'default', sub: null, config }, items));
    expect(committed.map((r) => [r.status, r.offset])).toEqual([
      ['queued', 0],
      ['queued', 1],
    ]);
  });

  it('reports duplicates inside a caller transaction without aborting it', async () => {
    const ctx = { tenant: 'default', sub: null, config };
    const items = parsePushItems([item('in-tx-dup', 1, { transactionId: 'x' })], config);
    await pushItems(db(), ctx, items);
    const out = await db().transaction(async (tx) => {
      const r = await pushItems(tx, ctx, items);
      await tx.query('SELECT 1');
      return r;
    });
    expect(out[0]).toMatchObject({ status: 'duplicate', offset: 0 });
  });
});
