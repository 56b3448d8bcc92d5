import { describe, expect, it } from 'vitest';
import { observe } from '../../lib/db/client.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db);

const DEFAULTS = {
  leaseTime: 300,
  retryLimit: 3,
  retryDelay: 0,
  deadLetterQueue: true,
  dlqAfterMaxRetries: true,
  delayedProcessing: 0,
  windowBuffer: 0,
  retentionEnabled: false,
  retentionSeconds: 0,
  completedRetentionSeconds: 0,
  dedupWindowSeconds: 3600,
  encryptionEnabled: false,
  priority: 0,
  maxSize: 0,
  ttl: 0,
  maxWaitTimeSeconds: 0,
};

const queueCount = async (name: string) =>
  Number((await db().query<{ n: string }>('SELECT count(*) AS n FROM queen.queues WHERE name = $1', [name]))[0]!.n);

describe('POST /api/v1/configure', () => {
  it('creates a queue with the defaults, leaseTime 300, and answers in the shape of docs/api.md#configure', async () => {
    const res = await api.configure('billing.invoices', { retryLimit: 5 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['configured', 'namespace', 'options', 'queue', 'queueId', 'storage', 'task', 'warnings']);
    expect(res.body).toMatchObject({
      configured: true,
      queue: 'billing.invoices',
      namespace: 'billing',
      task: 'invoices',
      storage: 'segments',
      warnings: [],
      options: { ...DEFAULTS, retryLimit: 5 },
    });
    expect(typeof res.body.queueId).toBe('string');
    expect(Object.keys(res.body.options)).toEqual(Object.keys(DEFAULTS));
  });

  it('overwrites the options sent and keeps the ones omitted', async () => {
    await api.configure('merge', { leaseTime: 30, retryLimit: 7, deadLetterQueue: false });
    const res = await api.configure('merge', { retryDelay: 250 });
    expect(res.body.options).toEqual({ ...DEFAULTS, leaseTime: 30, retryLimit: 7, deadLetterQueue: false, retryDelay: 250 });
    const [row] = await db().query<{ lease_time: number; retry_delay: number }>(
      "SELECT lease_time, retry_delay FROM queen.queues WHERE name = 'merge'",
    );
    expect(row).toEqual({ lease_time: 30, retry_delay: 250 });
  });

  it('keeps the 60 s lease of a queue a push created when configuring something else', async () => {
    await api.push('implicit', 'Default', [1]);
    const res = await api.configure('implicit', { retryLimit: 1 });
    expect(res.body.options.leaseTime).toBe(60);
    expect(res.body.options.retryLimit).toBe(1);
  });

  it('lets namespace and task in the body override the ones derived from the name, and keeps them later', async () => {
    const res = await api.configure('shop.orders', {}, { namespace: 'sales', task: 'fulfil' });
    expect(res.body).toMatchObject({ namespace: 'sales', task: 'fulfil' });
    const again = await api.configure('shop.orders', { leaseTime: 10 });
    expect(again.body).toMatchObject({ namespace: 'sales', task: 'fulfil' });
  });

  it('stores and echoes the compatibility options with one warning naming each that has no effect', async () => {
    const res = await api.configure('compat', { priority: 5, maxSize: 1000, ttl: 60, maxWaitTimeSeconds: 30 });
    expect(res.status).toBe(200);
    expect(res.body.options).toMatchObject({ priority: 5, maxSize: 1000, ttl: 60, maxWaitTimeSeconds: 30 });
    expect(res.body.warnings).toHaveLength(3);
    for (const name of ['priority', 'maxSize', 'ttl']) {
      expect(res.body.warnings.some((w: string) => w.startsWith(`${name} has no effect`))).toBe(true);
    }
    // maxWaitTimeSeconds has an effect: retention evicts what waited longer (test/retention/eviction.test.ts).
    const reset = await api.configure('compat', { priority: 0, maxSize: 0, ttl: 0 });
    expect(reset.body.warnings).toEqual([]);
  });

  it('warns that retentionSeconds does nothing while retentionEnabled is false', async () => {
    const res = await api.configure('retention-off', { retentionSeconds: 60 });
    expect(res.body.warnings).toEqual([expect.stringMatching(/retentionSeconds has no effect while retentionEnabled is false/)]);
  });

  it('refuses unknown option keys with a 400 naming each, and writes nothing', async () => {
    const res = await api.configure('unknown-keys', { leaseTime: 10, colour: 'red', speed: 3 });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('unknown_option');
    expect(res.body.error).toMatch(/"colour"/);
    expect(res.body.error).toMatch(/"speed"/);
    expect(await queueCount('unknown-keys')).toBe(0);
  });

  it.each([
    [{ leaseTime: 0 }, /leaseTime.*at least 1/],
    [{ leaseTime: '30' }, /leaseTime.*number/],
    [{ retryLimit: -1 }, /retryLimit must be at least 0/],
    [{ retryDelay: 1.5 }, /retryDelay.*whole number/],
    [{ deadLetterQueue: 'yes' }, /deadLetterQueue must be true or false/],
    [{ dedupWindowSeconds: 2 ** 31 }, /dedupWindowSeconds must be at most 2147483647/],
    [{ windowBuffer: null }, /windowBuffer.*number/],
    [{ encryptionEnabled: 1 }, /encryptionEnabled must be true or false/],
    [{ priority: 1e12 }, /priority must be at most/],
  ])('refuses %j with a 400 that says what to fix, and writes nothing', async (options, message) => {
    const res = await api.configure('bad-option', options);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_option');
    expect(res.body.error).toMatch(message);
    expect(await queueCount('bad-option')).toBe(0);
  });

  it.each([
    [{ options: {} }, /queue/],
    [{ queue: 'a/b' }, /queue must not contain "\/"/],
    [{ queue: '' }, /queue must not be empty/],
    [{ queue: 'ok', options: [1] }, /options/],
    [{ queue: 'ok', namespace: ' padded' }, /namespace must not start or end with spaces/],
    [[1, 2], /JSON object/],
  ])('refuses the body %j with a 400', async (body, message) => {
    const res = await api.call('POST', '/api/v1/configure', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await api.call('POST', '/api/v1/configure', '{"queue":');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
  });

  it('needs the admin role', async () => {
    const writer = testClient(db, { as: { role: 'read-write' } });
    const res = await writer.call('POST', '/api/v1/configure', { queue: 'forbidden' });
    expect(res.status).toBe(403);
    expect(await queueCount('forbidden')).toBe(0);
  });

  it('configures the same name independently per tenant', async () => {
    const other = testClient(db, { as: { tenant: 'acme' } });
    await api.configure('shared-name', { leaseTime: 11 });
    const res = await other.configure('shared-name', { leaseTime: 22 });
    expect(res.body.options.leaseTime).toBe(22);
    expect((await api.describe('shared-name')).body.options.leaseTime).toBe(11);
  });

  it('costs one SQL statement, the upsert', async () => {
    const log = { statements: [] as string[] };
    const observed = testClient(observe(db(), log));
    const res = await observed.call('POST', '/api/v1/configure', { queue: 'one-statement', options: { leaseTime: 5 } });
    expect(res.status).toBe(200);
    expect(log.statements).toEqual([expect.stringMatching(/queen\.configure_queue/)]);
  });
});
