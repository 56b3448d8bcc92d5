// Tenant A, an admin in its own tenant, drives every route at tenant B's resources: nothing may be read, changed or revealed.
import { beforeAll, describe, expect, it } from 'vitest';
import { rollupMinuteStats } from '../../lib/broker/minute-stats.js';
import { useDatabase } from '../support/db.js';
import { callerFor, enc, type Caller } from './support.js';

const QUEUE_B = 'orders.invoices';
const GROUP_B = 'billing-b';

const db = useDatabase();
let a: Caller;
let b: Caller;
/** What B created: its partition id, the live lease of its consumer group, the DLQ'd and the pending transaction ids. */
const bData = { partitionId: '', leaseId: '', dlqTxn: 'b-dead', leasedTxn: 'b-2', pendingTxn: 'b-3' };

/** Everything stored for tenant B, straight from the tables, to compare before and after A's attempts. */
async function snapshotB() {
  const scope = `FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id WHERE q.tenant_id = 'tenant-b'`;
  return {
    queues: await db().query(`SELECT * FROM queen.queues WHERE tenant_id = 'tenant-b' ORDER BY id`),
    partitions: await db().query(`SELECT p.* ${scope} ORDER BY p.id`),
    segments: await db().query(
      `SELECT s.partition_id, s.base_offset, s.end_offset, md5(s.blob) AS blob ${scope.replace('WHERE', 'JOIN queen.log_segments s ON s.partition_id = p.id WHERE')} ORDER BY 1, 2`,
    ),
    consumers: await db().query(
      `SELECT c.* ${scope.replace('WHERE', 'JOIN queen.log_consumers c ON c.partition_id = p.id WHERE')} ORDER BY c.consumer_group`,
    ),
    subscriptions: await db().query(
      `SELECT s.* FROM queen.consumer_subscriptions s JOIN queen.queues q ON q.id = s.queue_id WHERE q.tenant_id = 'tenant-b' ORDER BY s.consumer_group`,
    ),
    sidecars: await db().query(
      `SELECT t.partition_id, t.base_offset, md5(t.hashes) AS hashes ${scope.replace('WHERE', 'JOIN queen.log_txns t ON t.partition_id = p.id WHERE')} ORDER BY 1, 2`,
    ),
    dlq: await db().query(
      `SELECT d.* ${scope.replace('WHERE', 'JOIN queen.log_dlq d ON d.partition_id = p.id WHERE')} ORDER BY d.msg_offset`,
    ),
    traces: await db().query(`SELECT t.*, n.trace_name FROM queen.message_traces t JOIN queen.queues q ON q.id = t.queue_id
                               LEFT JOIN queen.message_trace_names n ON n.trace_id = t.id WHERE q.tenant_id = 'tenant-b' ORDER BY t.id, n.trace_name`),
  };
}

beforeAll(async () => {
  a = await callerFor(db, 'tenant-a', 'alice');
  b = await callerFor(db, 'tenant-b', 'bob');
  const configured = await b('POST', '/api/v1/configure', {
    queue: QUEUE_B,
    namespace: 'orders',
    task: 'invoices',
    options: { leaseTime: 300 },
  });
  expect(configured.status).toBe(200);
  const items = ['b-dead', 'b-2', 'b-3'].map((t, n) => ({ queue: QUEUE_B, partition: 'p1', transactionId: t, payload: { n, owner: 'b' } }));
  expect((await b('POST', '/api/v1/push', { items })).status).toBe(201);
  const first = await b('GET', `/api/v1/pop/queue/${enc(QUEUE_B)}/partition/p1?consumerGroup=${GROUP_B}`);
  bData.partitionId = String(first.body?.partitionId ?? '');
  await b('POST', '/api/v1/ack', {
    transactionId: 'b-dead',
    partitionId: bData.partitionId,
    leaseId: first.body?.leaseId,
    consumerGroup: GROUP_B,
    status: 'dlq',
    error: 'poison',
  });
  const second = await b('GET', `/api/v1/pop/queue/${enc(QUEUE_B)}/partition/p1?consumerGroup=${GROUP_B}`);
  bData.leaseId = String(second.body?.leaseId ?? '');
  const traced = await b('POST', '/api/v1/traces', {
    transactionId: bData.leasedTxn,
    partitionId: bData.partitionId,
    consumerGroup: GROUP_B,
    traceNames: ['b-flow'],
    data: { owner: 'b' },
  });
  expect(traced.status).toBe(201);
});

describe('tenant B has data for the matrix', () => {
  it('B sees its own queue, its live lease and its DLQ row', async () => {
    expect(bData.partitionId).not.toBe('');
    expect(bData.leaseId).not.toBe('');
    const dlq = await b('GET', `/api/v1/dlq?queue=${enc(QUEUE_B)}`);
    expect(dlq.body.messages.map((m: any) => m.transactionId)).toEqual([bData.dlqTxn]);
  });
});

describe('tenant A cannot see tenant B', () => {
  it("listings show A nothing of B, and B's queue is a 404 for A", async () => {
    expect((await b('GET', `/api/v1/resources/queues/${enc(QUEUE_B)}`)).status).toBe(200);
    expect((await a('GET', '/api/v1/resources/queues')).body.queues).toEqual([]);
    const one = await a('GET', `/api/v1/resources/queues/${enc(QUEUE_B)}`);
    expect(one.status).toBe(404);
    expect(one.text).not.toContain('tenant-b');
    for (const path of ['/api/v1/resources/namespaces', '/api/v1/resources/tasks', '/api/v1/consumer-groups']) {
      const res = await a('GET', path);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain('orders');
      expect(res.text).not.toContain('invoices');
      expect(res.text).not.toContain(GROUP_B);
    }
  });

  it("B's groups, messages, traces and figures are invisible to A on every reading route", async () => {
    for (const path of [
      '/api/v1/consumer-groups/lagging?minLagSeconds=0',
      `/api/v1/consumer-groups/${GROUP_B}`,
      '/api/v1/messages',
      `/api/v1/messages?queue=${enc(QUEUE_B)}&status=processing`,
      '/api/v1/resources/overview',
      `/api/v1/traces/${bData.partitionId}/${bData.leasedTxn}`,
      '/api/v1/traces/by-name/b-flow',
      '/api/v1/traces/names',
    ]) {
      const res = await a('GET', path);
      expect([path, res.status]).toEqual([path, 200]);
      for (const secret of ['orders', 'invoices', GROUP_B, 'b-flow', bData.leasedTxn, '"owner"']) expect(res.text).not.toContain(secret);
    }
    expect((await a('GET', '/api/v1/resources/overview')).body).toMatchObject({ queues: 0, messages: { total: 0 } });
    expect((await b('GET', '/api/v1/traces/by-name/b-flow')).body.total).toBe(1);
  });

  it("B's DLQ rows and messages are invisible to A even with B's partition id", async () => {
    for (const path of [`/api/v1/dlq?queue=${enc(QUEUE_B)}`, '/api/v1/dlq', `/api/v1/dlq?consumerGroup=${GROUP_B}`]) {
      const res = await a('GET', path);
      expect(res.status).toBe(200);
      expect([res.body.total, res.body.messages]).toEqual([0, []]);
    }
    for (const txn of [bData.dlqTxn, bData.leasedTxn, bData.pendingTxn]) {
      const res = await a('GET', `/api/v1/messages/${bData.partitionId}/${txn}`);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('owner');
    }
  });
});

describe('tenant A sees nothing of tenant B on the dashboard and metrics routes', () => {
  it("status, analytics and metrics answer A without a trace of B's queue, group or figures", async () => {
    await rollupMinuteStats(db());
    expect((await b('GET', '/api/v1/status')).body.messages.total).toBe(3);
    expect((await b('GET', '/metrics/prometheus')).text).toContain(GROUP_B);
    for (const path of [
      '/api/v1/status',
      `/api/v1/status?queue=${enc(QUEUE_B)}`,
      '/api/v1/status/queues',
      '/api/v1/status/analytics',
      '/api/v1/analytics/queue-ops',
      `/api/v1/analytics/queue-ops?queue=${enc(QUEUE_B)}`,
      '/api/v1/analytics/queue-lag',
      '/api/v1/analytics/retention',
      '/api/v1/analytics/worker-metrics',
      '/metrics/prometheus',
      '/metrics',
    ]) {
      const res = await a('GET', path);
      expect([path, res.status]).toEqual([path, 200]);
      for (const secret of ['orders', GROUP_B, 'tenant-b']) expect([path, res.text.includes(secret)]).toEqual([path, false]);
    }
    expect((await a('GET', '/api/v1/status')).body.messages).toMatchObject({ total: 0, deadLetter: 0 });
    expect((await a('GET', '/metrics')).body.messages.total).toBe(0);
    const detail = await a('GET', `/api/v1/status/queues/${enc(QUEUE_B)}`);
    expect(detail.status).toBe(404);
    expect(detail.text).not.toContain('tenant-b');
  });

  it("maintenance switched on by A leaves B's pops and switches alone", async () => {
    expect((await a('POST', '/api/v1/system/maintenance/pop', { enabled: true })).body.popMaintenanceMode).toBe(true);
    expect((await b('GET', '/api/v1/system/maintenance')).body).toMatchObject({ maintenanceMode: false, popMaintenanceMode: false });
    expect((await a('POST', '/api/v1/system/maintenance/pop', { enabled: false })).body.popMaintenanceMode).toBe(false);
  });
});

describe('tenant A cannot change tenant B', () => {
  it("acks, lease extensions and transactions aimed at B's lease and partition change nothing", async () => {
    const before = await snapshotB();
    const ack = {
      transactionId: bData.leasedTxn,
      partitionId: bData.partitionId,
      leaseId: bData.leaseId,
      consumerGroup: GROUP_B,
      status: 'completed',
    };
    const single = await a('POST', '/api/v1/ack', ack);
    expect(single.status).not.toBe(403);
    expect(single.status === 404 || single.body?.success === false || single.body?.[0]?.success === false).toBe(true);
    const noLease = await a('POST', '/api/v1/ack', { ...ack, leaseId: '', status: 'dlq' });
    expect(noLease.status === 404 || noLease.body?.success === false || noLease.body?.[0]?.success === false).toBe(true);
    for (const offset of [1, 2]) {
      const byOffset = await a('POST', '/api/v1/ack', { ...ack, offset });
      expect(byOffset.status).not.toBe(403);
      expect(byOffset.status === 404 || byOffset.body?.[0]?.success === false).toBe(true);
    }
    const batch = await a('POST', '/api/v1/ack/batch', {
      consumerGroup: GROUP_B,
      acknowledgments: [ack, { ...ack, transactionId: bData.pendingTxn, status: 'failed' }],
    });
    expect(batch.status).not.toBe(403);
    if (batch.status === 200) expect(batch.body.every((r: any) => r.success === false)).toBe(true);
    const extend = await a('POST', `/api/v1/lease/${bData.leaseId}/extend`, { seconds: 3600 });
    expect(extend.status).not.toBe(403);
    if (extend.status === 200) expect(extend.body[0]).toMatchObject({ success: false, error: 'Lease not found' });
    const txn = await a('POST', '/api/v1/transaction', { operations: [{ type: 'ack', ...ack }] });
    expect(txn.status).not.toBe(403);
    if (txn.status === 200) expect(txn.body.success).toBe(false);
    expect(await snapshotB()).toEqual(before);
  });

  it("DLQ retry and delete aimed at B's DLQ row change nothing", async () => {
    const before = await snapshotB();
    expect(before.dlq).toHaveLength(1);
    expect((await a('POST', `/api/v1/messages/${bData.partitionId}/${bData.dlqTxn}/retry`, {})).status).toBe(404);
    const del = await a('DELETE', `/api/v1/messages/${bData.partitionId}/${bData.dlqTxn}`);
    expect([200, 404]).toContain(del.status);
    expect(await snapshotB()).toEqual(before);
  });

  it("traces, subscription updates and partition seeks aimed at B's partition and group change nothing", async () => {
    const before = await snapshotB();
    const trace = await a('POST', '/api/v1/traces', {
      transactionId: bData.leasedTxn,
      partitionId: bData.partitionId,
      traceNames: ['b-flow'],
      data: { owner: 'a' },
    });
    expect([trace.status, trace.body.code]).toEqual([404, 'partition_not_found']);
    const sub = await a('POST', `/api/v1/consumer-groups/${GROUP_B}/subscription`, { subscriptionTimestamp: '2000-01-01T00:00:00Z' });
    expect(sub.body.rowsUpdated).toBe(0);
    expect((await a('POST', `/api/v1/consumer-groups/${GROUP_B}/queues/${enc(QUEUE_B)}/partitions/p1/seek`)).status).toBe(404);
    expect((await a('DELETE', `/api/v1/consumer-groups/${GROUP_B}?deleteMetadata=false`)).body.deletedPartitions).toBe(0);
    expect(await snapshotB()).toEqual(before);
  });

  it("seek, group delete and queue delete aimed at B's names change nothing", async () => {
    const before = await snapshotB();
    expect(before.queues).toHaveLength(1);
    for (const body of [{ toEnd: true }, { timestamp: '2000-01-01T00:00:00Z' }, { offset: 0, partition: 'p1' }]) {
      const seek = await a('POST', `/api/v1/consumer-groups/${GROUP_B}/queues/${enc(QUEUE_B)}/seek`, body);
      expect(seek.status).toBe(404);
    }
    expect([200, 404]).toContain((await a('DELETE', `/api/v1/consumer-groups/${GROUP_B}/queues/${enc(QUEUE_B)}`)).status);
    expect([200, 404]).toContain((await a('DELETE', `/api/v1/consumer-groups/${GROUP_B}`)).status);
    const dropped = await a('DELETE', `/api/v1/resources/queues/${enc(QUEUE_B)}`);
    expect([200, 404]).toContain(dropped.status);
    if (dropped.status === 200) expect(dropped.body.existed).toBe(false);
    expect(await snapshotB()).toEqual(before);
  });
});

describe("tenant A's pops of B's names", () => {
  it("A's pops never deliver B's messages", async () => {
    const before = await snapshotB();
    for (const path of [
      `/api/v1/pop/queue/${enc(QUEUE_B)}?consumerGroup=other`,
      `/api/v1/pop/queue/${enc(QUEUE_B)}/partition/p1?consumerGroup=other&batch=10`,
      `/api/v1/pop/queue/${enc(QUEUE_B)}/partition/p1?batch=10`,
      '/api/v1/pop?namespace=orders&consumerGroup=other',
      '/api/v1/pop?task=invoices&batch=10',
    ]) {
      const res = await a('GET', path);
      expect([path, res.status]).toEqual([path, 204]);
    }
    expect(await snapshotB()).toEqual(before);
  });
});

describe('two tenants may own the same queue name', () => {
  it("A configures, pushes to and pops its own queue of B's name without touching B's", async () => {
    const before = await snapshotB();
    const configured = await a('POST', '/api/v1/configure', { queue: QUEUE_B, options: { leaseTime: 17, retryLimit: 0 } });
    expect(configured.status).toBe(200);
    const pushed = await a('POST', '/api/v1/push', {
      items: [{ queue: QUEUE_B, partition: 'p1', transactionId: bData.dlqTxn, payload: { owner: 'a' } }],
    });
    expect(pushed.status).toBe(201);
    expect(pushed.body[0]).toMatchObject({ status: 'queued', offset: 0 });
    expect(pushed.body[0].partition_id).not.toBe(bData.partitionId);

    const popped = await a('GET', `/api/v1/pop/queue/${enc(QUEUE_B)}/partition/p1?consumerGroup=${GROUP_B}&batch=10`);
    expect(popped.status).toBe(200);
    expect(popped.body.messages.map((m: any) => m.data)).toEqual([{ owner: 'a' }]);
    expect((await a('GET', `/api/v1/dlq?queue=${enc(QUEUE_B)}`)).body.total).toBe(0);
    const ownLease = { partitionId: bData.partitionId, leaseId: popped.body.leaseId, consumerGroup: GROUP_B, status: 'completed' };
    for (const transactionId of [bData.leasedTxn, bData.pendingTxn]) {
      const res = await a('POST', '/api/v1/ack', { ...ownLease, transactionId });
      expect(res.body[0].success).toBe(false);
    }
    expect((await a('POST', `/api/v1/lease/${popped.body.leaseId}/extend`, { seconds: 600 })).body[0].success).toBe(true);

    expect(await snapshotB()).toEqual(before);
    const bQueue = await b('GET', `/api/v1/resources/queues/${enc(QUEUE_B)}`);
    expect(bQueue.status).toBe(200);
    expect((await b('GET', '/api/v1/resources/queues')).body.queues).toHaveLength(1);
    expect((await a('GET', '/api/v1/resources/queues')).body.queues).toHaveLength(1);
  });
});

describe('producer identity', () => {
  it('the token subject comes back as producerSub on pop and in the DLQ, and a body producerSub is ignored', async () => {
    const bRw = await callerFor(db, 'tenant-b', 'bob-service', { role: 'read-write' });
    const pushed = await bRw('POST', '/api/v1/push', {
      items: [{ queue: 'psub', transactionId: 'ps-1', payload: 1, producerSub: 'mallory' }],
    });
    expect(pushed.status).toBe(201);
    const popped = await bRw('GET', '/api/v1/pop/queue/psub');
    expect(popped.body.messages[0].producerSub).toBe('bob-service');
    const m = popped.body.messages[0];
    await bRw('POST', '/api/v1/ack', {
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId,
      status: 'dlq',
      error: 'x',
    });
    const dlq = await b('GET', '/api/v1/dlq?queue=psub');
    expect(dlq.body.messages.map((r: any) => r.producerSub)).toEqual(['bob-service']);
  });

  it('a push inside a transaction also stores the token subject', async () => {
    const bRw = await callerFor(db, 'tenant-b', 'bob-batch', { role: 'read-write' });
    const res = await bRw('POST', '/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'psub-txn', payload: 1, producerSub: 'mallory' }] }],
    });
    expect(res.body.success).toBe(true);
    expect((await bRw('GET', '/api/v1/pop/queue/psub-txn')).body.messages[0].producerSub).toBe('bob-batch');
  });

  it('a token without sub stores no producer sub', async () => {
    const anon = await callerFor(db, 'tenant-b', null, { role: 'read-write' });
    await anon('POST', '/api/v1/push', { items: [{ queue: 'psub-none', payload: 1, producerSub: 'mallory' }] });
    const popped = await anon('GET', '/api/v1/pop/queue/psub-none');
    expect(popped.body.messages[0].producerSub).toBeNull();
  });
});
