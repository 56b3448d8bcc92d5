// Message traces exactly as Queen's consume loops post them (client-js ConsumerManager, client-py
// consumer_manager), read back through the three readers the admin clients and dashboard call.
import { describe, expect, it } from 'vitest';
import { runRetention } from '../../lib/broker/retention.js';
import type { Database } from '../../lib/db/types.js';
import { backdate } from '../admin/helpers.js';
import { testClient, type PopBody, type TestClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What msg.trace({traceName, eventType, data}) posts for a message the loop received. */
const traceOf = (m: { transactionId: string; partitionId: string }, extra: Record<string, unknown>, group = '__QUEUE_MODE__') => ({
  transactionId: m.transactionId,
  partitionId: m.partitionId,
  consumerGroup: group,
  ...extra,
});

async function popped(client: TestClient, queue: string, count: number, group?: string): Promise<PopBody> {
  await client.pushNumbered(queue, 'p1', count);
  const res = await client.popQueue(queue, { batch: count, ...(group ? { consumerGroup: group } : {}) });
  expect(res.status).toBe(200);
  return res.body;
}

const rows = async (table: string) => Number((await db().query<{ n: string }>(`SELECT count(*) AS n FROM queen.${table}`))[0]!.n);

describe('POST /api/v1/traces', () => {
  it('stores a trace for a popped message and reads it back by message, oldest first, names sorted', async () => {
    const pop = await popped(api, 'tr-basic', 2, 'billing');
    const [m0] = pop.messages;
    const first = await api.call(
      'POST',
      '/api/v1/traces',
      traceOf(m0!, { traceNames: ['order-17', 'tenant-acme'], eventType: 'step', data: { text: 'charged card', amount: 1299 } }, 'billing'),
    );
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ success: true, traceId: expect.stringMatching(/^[0-9a-f-]{36}$/), offset: 0 });
    const second = await api.call('POST', '/api/v1/traces', traceOf(m0!, { traceNames: 'order-17', data: { text: 'shipped' } }, 'billing'));
    expect(second.status).toBe(201);

    const res = await api.call('GET', `/api/v1/traces/${m0!.partitionId}/${m0!.transactionId}`);
    expect(res.status).toBe(200);
    expect(res.body.traces).toEqual([
      {
        id: first.body.traceId,
        transaction_id: m0!.transactionId,
        partition_id: m0!.partitionId,
        event_type: 'step',
        data: { text: 'charged card', amount: 1299 },
        consumer_group: 'billing',
        worker_id: null,
        created_at: expect.stringMatching(ISO_MS),
        offset: 0,
        trace_names: ['order-17', 'tenant-acme'],
      },
      expect.objectContaining({ id: second.body.traceId, event_type: 'info', trace_names: ['order-17'], data: { text: 'shipped' } }),
    ]);
    // The other message of the batch has no trace.
    const other = await api.call('GET', `/api/v1/traces/${m0!.partitionId}/${pop.messages[1]!.transactionId}`);
    expect(other.body).toEqual({ traces: [] });
  });

  it('defaults the group and event type, collapses duplicate names and drops empty ones', async () => {
    const [m] = (await popped(api, 'tr-defaults', 1)).messages;
    const res = await api.call('POST', '/api/v1/traces', {
      transactionId: m!.transactionId,
      partitionId: m!.partitionId,
      data: null,
      traceNames: ['a', '', 'a', 'b'],
    });
    expect(res.status).toBe(201);
    const [t] = (await api.call('GET', `/api/v1/traces/${m!.partitionId}/${m!.transactionId}`)).body.traces;
    expect(t).toMatchObject({ consumer_group: '__QUEUE_MODE__', event_type: 'info', data: null, trace_names: ['a', 'b'] });
  });

  it('keeps a trace for a message whose sidecar hash retention already purged, without an offset', async () => {
    const [m] = (await popped(api, 'tr-purged', 1)).messages;
    await backdate(db(), 'tr-purged', 7200);
    await runRetention(db());
    expect((await db().query('SELECT 1 FROM queen.log_txns t WHERE t.partition_id = $1', [m!.partitionId])).length).toBe(0);
    const res = await api.call('POST', '/api/v1/traces', traceOf(m!, { data: { late: true } }));
    expect(res.status).toBe(201);
    expect(res.body.offset).toBeNull();
    const read = await api.call('GET', `/api/v1/traces/${m!.partitionId}/${m!.transactionId}`);
    expect(read.body.traces.map((t: { data: unknown; offset: unknown }) => [t.data, t.offset])).toEqual([[{ late: true }, null]]);
  });

  it.each([
    [{ partitionId: '1', data: 1 }, 400, 'invalid_request'],
    [{ transactionId: 't', data: 1 }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: '1' }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: 'p-1', data: 1 }, 400, 'invalid_partition_id'],
    [{ transactionId: 't', partitionId: '1', data: 1, traceNames: [7] }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: '1', data: 1, traceNames: Array.from({ length: 33 }, (_, i) => `n${i}`) }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: '1', data: 1, eventType: 5 }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: '1', data: 1, consumerGroup: 'a/b' }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: '1', data: { blob: 'x'.repeat(70_000) } }, 413, 'trace_too_large'],
    [{ transactionId: 't', partitionId: '1', data: { text: 'a\u0000b' } }, 400, 'invalid_request'],
    [{ transactionId: 't\u0000', partitionId: '1', data: 1 }, 400, 'invalid_request'],
    [{ transactionId: 't', partitionId: '1', data: 1, traceNames: ['a\nb'] }, 400, 'invalid_request'],
    [[1], 400, 'invalid_request'],
  ])('refuses %j with %i %s and stores nothing', async (body, status, code) => {
    const before = await rows('message_traces');
    const res = await api.call('POST', '/api/v1/traces', body);
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.body.error).toMatch(/\w/);
    expect(await rows('message_traces')).toBe(before);
  });

  it("answers 404 for an unknown partition and for another tenant's, and keeps tenants' traces apart", async () => {
    const [m] = (await popped(api, 'tr-tenant', 1)).messages;
    await api.call('POST', '/api/v1/traces', traceOf(m!, { traceNames: ['shared-name'], data: { owner: 'default' } }));
    const acme = testClient(db, { as: { tenant: 'acme' } });
    const before = await rows('message_traces');
    for (const partitionId of [m!.partitionId, '999999']) {
      const res = await acme.call('POST', '/api/v1/traces', traceOf({ ...m!, partitionId }, { data: 1 }));
      expect([res.status, res.body.code]).toEqual([404, 'partition_not_found']);
    }
    expect(await rows('message_traces')).toBe(before);
    expect((await acme.call('GET', `/api/v1/traces/${m!.partitionId}/${m!.transactionId}`)).body).toEqual({ traces: [] });
    expect((await acme.call('GET', '/api/v1/traces/by-name/shared-name')).body).toMatchObject({ traces: [], total: 0 });
    expect((await acme.call('GET', '/api/v1/traces/names')).body).toMatchObject({ trace_names: [], total: 0 });
  });
});

describe('GET /api/v1/traces/by-name/:name and /traces/names', () => {
  it('pages the traces carrying a name, oldest first, with queue and partition names, and counts them all', async () => {
    const pop = await popped(api, 'tr-byname', 3);
    for (const [i, m] of pop.messages.entries()) {
      await api.call('POST', '/api/v1/traces', traceOf(m, { traceNames: ['flow-x', `only-${i}`], data: { step: i } }));
    }
    const all = await api.call('GET', '/api/v1/traces/by-name/flow-x');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.pagination).toEqual({ limit: 100, offset: 0 });
    expect(all.body.traces.map((t: { data: { step: number } }) => t.data.step)).toEqual([0, 1, 2]);
    expect(all.body.traces[0]).toMatchObject({
      transaction_id: pop.messages[0]!.transactionId,
      partition_id: pop.messages[0]!.partitionId,
      queue_name: 'tr-byname',
      partition_name: 'p1',
      message_payload: null,
      trace_names: ['flow-x', 'only-0'],
    });
    const page = await api.call('GET', '/api/v1/traces/by-name/flow-x?limit=2&offset=1');
    expect(page.body.traces.map((t: { data: { step: number } }) => t.data.step)).toEqual([1, 2]);
    expect([page.body.total, page.body.pagination]).toEqual([3, { limit: 2, offset: 1 }]);
    expect((await api.call('GET', '/api/v1/traces/by-name/nobody')).body).toEqual({
      traces: [],
      total: 0,
      pagination: { limit: 100, offset: 0 },
    });
  });

  it('lists names with how many traces and distinct messages carry each, most recent first', async () => {
    const [m0, m1] = (await popped(api, 'tr-names', 2)).messages;
    for (const m of [m0!, m0!, m1!]) await api.call('POST', '/api/v1/traces', traceOf(m, { traceNames: 'names-a', data: 1 }));
    await api.call('POST', '/api/v1/traces', traceOf(m1!, { traceNames: 'names-b', data: 1 }));
    const res = await api.call('GET', '/api/v1/traces/names?limit=500');
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.trace_names.map((n: { trace_name: string }) => [n.trace_name, n]));
    expect(byName['names-a']).toEqual({
      trace_name: 'names-a',
      trace_count: 3,
      message_count: 2,
      last_seen: expect.stringMatching(ISO_MS),
    });
    expect(byName['names-b']).toMatchObject({ trace_count: 1, message_count: 1 });
    expect(res.body.trace_names[0].trace_name).toBe('names-b');
    expect(res.body.total).toBe(res.body.trace_names.length);
    const [{ n }] = (await db().query<{ n: string }>(
      "SELECT count(DISTINCT trace_name) AS n FROM queen.message_trace_names WHERE tenant_id = 'default'",
    )) as [{ n: string }];
    expect(res.body.total).toBe(Number(n));
    expect((await api.call('GET', '/api/v1/traces/names?limit=1')).body.trace_names).toHaveLength(1);
  });

  it.each([
    '/api/v1/traces/names?limit=0',
    '/api/v1/traces/names?offset=-1',
    '/api/v1/traces/by-name/x?limit=1001',
    '/api/v1/traces/by-name/x?limit=ten',
    '/api/v1/traces/names?offset=2147483648',
    '/api/v1/traces/abc/t',
    '/api/v1/traces/1/t%00',
  ])('answers %s with a 400', async (path) => {
    const res = await api.call('GET', path);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/must/);
  });
});

describe('trace retention and deletion', () => {
  it('retention deletes traces older than seven days with their names, and keeps newer ones', async () => {
    const [m0, m1] = (await popped(api, 'tr-retention', 2)).messages;
    const old = await api.call('POST', '/api/v1/traces', traceOf(m0!, { traceNames: ['ret-old'], data: 1 }));
    await api.call('POST', '/api/v1/traces', traceOf(m1!, { traceNames: ['ret-new'], data: 1 }));
    await db().query("UPDATE queen.message_traces SET created_at = now() - interval '8 days' WHERE id = $1", [old.body.traceId]);
    const report = await runRetention(db());
    expect(report.tracesDeleted).toBeGreaterThanOrEqual(1);
    expect((await db().query('SELECT 1 FROM queen.message_traces WHERE id = $1', [old.body.traceId])).length).toBe(0);
    expect((await db().query('SELECT 1 FROM queen.message_trace_names WHERE trace_id = $1', [old.body.traceId])).length).toBe(0);
    expect((await api.call('GET', '/api/v1/traces/by-name/ret-new')).body.total).toBe(1);
  });

  it('deleting a queue deletes its traces', async () => {
    const [m] = (await popped(api, 'tr-doomed', 1)).messages;
    const t = await api.call('POST', '/api/v1/traces', traceOf(m!, { traceNames: ['doomed'], data: 1 }));
    expect((await api.call('DELETE', '/api/v1/resources/queues/tr-doomed')).body.existed).toBe(true);
    expect((await db().query('SELECT 1 FROM queen.message_traces WHERE id = $1', [t.body.traceId])).length).toBe(0);
    expect((await api.call('GET', '/api/v1/traces/by-name/doomed')).body.total).toBe(0);
  });
});

describe('the hot path never touches the trace tables', () => {
  /**
   * Runs `work` through the HTTP app inside one transaction and returns what it did to each table:
   * the difference of the backend's counters, which are never flushed in the middle of a transaction.
   */
  async function activity(work: (client: TestClient) => Promise<void>) {
    return db().transaction(async (tx) => {
      const counters = async () =>
        Object.fromEntries(
          (
            await tx.query<{ relname: string; n: string }>(
              `SELECT relname, (seq_scan + COALESCE(idx_scan, 0) + n_tup_ins + n_tup_upd + n_tup_del)::text AS n
                 FROM pg_stat_xact_user_tables WHERE schemaname = 'queen'`,
            )
          ).map((s) => [s.relname, Number(s.n)]),
        );
      const before = await counters();
      const inTx: Database = {
        driver: db().driver,
        query: (text, params) => tx.query(text, params),
        transaction: (fn) => fn(tx),
        close: async () => {},
      };
      await work(testClient(inTx));
      const after = await counters();
      return Object.fromEntries(Object.entries(after).map(([table, n]) => [table, n - (before[table] ?? 0)]));
    });
  }

  it('push, pop, ack and a leaseless ack read and write no trace row, while a posted trace does', async () => {
    await api.pushNumbered('tr-hot', 'p1', 1);
    const hot = await activity(async (c) => {
      await c.pushNumbered('tr-hot', 'p1', 5, (i) => `hot-${i}`, 1);
      const pop = (await c.popQueue('tr-hot', { batch: 3 })).body as PopBody;
      await c.ackAll(pop);
      const next = (await c.popQueue('tr-hot', { batch: 10, autoAck: true })).body as PopBody;
      expect(next.messages).toHaveLength(3);
      await c.ack({ transactionId: 'hot-5', partitionId: pop.partitionId, leaseId: '', status: 'completed' });
    });
    // The counters see this work: the log tables were read and written.
    expect(hot.log_segments).toBeGreaterThan(0);
    expect(hot.log_consumers).toBeGreaterThan(0);
    expect([hot.message_traces, hot.message_trace_names]).toEqual([0, 0]);

    const traced = await activity(async (c) => {
      const [m] = (await popped(c, 'tr-hot-2', 1)).messages;
      expect((await c.call('POST', '/api/v1/traces', traceOf(m!, { traceNames: 'hot', data: 1 }))).status).toBe(201);
    });
    expect(traced.message_traces).toBeGreaterThan(0);
    expect(traced.message_trace_names).toBeGreaterThan(0);
  });
});
