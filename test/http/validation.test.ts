// Every number and object in a request is checked at the edge (docs/api.md#validation):
// a whole number within its field's range, an object that is an object, option and status
// names that are the table's own (never "constructor"), text PostgreSQL can hold. Each refusal is a
// 400 that writes nothing: these are the requests a fault-injection fuzz found answering 500 or
// 200.
import { beforeAll, describe, expect, it } from 'vitest';
import { tableFingerprint } from '../../support/audit.js';
import { testClient, type PopBody } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db);

/** Sends the request and expects a 400 with `code` (when given) and no table changed. */
async function refused(method: string, path: string, body: unknown, code?: string) {
  const before = await tableFingerprint(db());
  const res = await api.call(method, path, body);
  expect([res.status, typeof res.body?.error], `${method} ${path} ${JSON.stringify(body)} -> ${res.text}`).toEqual([400, 'string']);
  if (code) expect(res.body.code).toBe(code);
  expect(await tableFingerprint(db())).toEqual(before);
  return res.body as { error: string; code: string };
}

let leased: PopBody;
beforeAll(async () => {
  await api.pushNumbered('checked', 'p', 3);
  leased = (await api.popQueue('checked', { batch: 3 })).body;
});

const ack = (extra: Record<string, unknown>) => ({
  transactionId: leased.messages[0]!.transactionId,
  partitionId: leased.partitionId,
  leaseId: leased.leaseId,
  status: 'completed',
  ...extra,
});

describe('numbers', () => {
  it.each([2 ** 63, 1e30, 1e308, -1, 1.5, '0'])('refuses an ack offset of %s on /ack and /ack/batch', async (offset) => {
    const single = await refused('POST', '/api/v1/ack', ack({ offset }));
    expect(single.error).toMatch(/offset must be/);
    await refused('POST', '/api/v1/ack/batch', { acknowledgments: [ack({ offset })] });
  });

  it.each([2 ** 63, 1e30, -1, 0.5])('refuses a numeric partitionId of %s', async (partitionId) => {
    await refused('POST', '/api/v1/ack', ack({ partitionId }));
  });

  it.each([0, 2 ** 63, 1e308, 1.5, '60'])('refuses lease extend seconds of %s', async (seconds) => {
    await refused('POST', `/api/v1/lease/${leased.leaseId}/extend`, { seconds });
  });

  it.each(['1e3', '2e308', '99999999999999999999', '-1', '1.5'])('refuses a pop batch of "%s"', async (batch) => {
    await refused('GET', `/api/v1/pop/queue/checked?batch=${batch}`, undefined);
  });

  it.each(['1e3', '99999999999999999999', '-1'])('refuses a DLQ page offset of "%s"', async (offset) => {
    await refused('GET', `/api/v1/dlq?offset=${offset}`, undefined, 'invalid_query');
  });

  it('refuses a seek offset beyond 2^53', async () => {
    await refused('POST', '/api/v1/consumer-groups/g/queues/checked/seek', { offset: 2 ** 63, partition: 'p' }, 'invalid_seek');
  });
});

describe('objects', () => {
  it.each(['[]', '"x"', '1', '[{"seconds":60}]', 'null'])(
    'refuses lease extend with body %s and leaves the lease as it was',
    async (body) => {
      const [before] = await db().query<{ lease_expires_at: Date }>(
        'SELECT lease_expires_at FROM queen.log_consumers WHERE worker_id = $1',
        [leased.leaseId],
      );
      await refused('POST', `/api/v1/lease/${leased.leaseId}/extend`, body);
      const [after] = await db().query<{ lease_expires_at: Date }>(
        'SELECT lease_expires_at FROM queen.log_consumers WHERE worker_id = $1',
        [leased.leaseId],
      );
      expect(after!.lease_expires_at).toEqual(before!.lease_expires_at);
    },
  );

  it('still extends with an empty body or {}', async () => {
    for (const body of [undefined, {}]) {
      const res = await api.call('POST', `/api/v1/lease/${leased.leaseId}/extend`, body);
      expect([res.status, res.body[0].success]).toEqual([200, true]);
    }
  });

  it.each([[[]], ['x'], [1]])('refuses configure options of %j', async (options) => {
    await refused('POST', '/api/v1/configure', { queue: 'checked', options });
  });

  it.each(['[]', '"x"'])('refuses a DLQ retry with body %s', async (body) => {
    await refused('POST', '/api/v1/messages/1/nothing/retry', body);
  });

  it.each([['x'], [null], [[{ type: 'push', items: [] }]]])('refuses a transaction operation of %j', async (op) => {
    await refused('POST', '/api/v1/transaction', { operations: [op] });
  });
});

describe("names that are not the table's own", () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])('refuses configure option "%s" as unknown', async (key) => {
    const body = await refused('POST', '/api/v1/configure', `{"queue":"checked","options":{"${key}":1}}`, 'unknown_option');
    expect(body.error).toContain(`"${key}"`);
  });

  it.each(['constructor', '__proto__', 'toString'])('refuses ack status "%s"', async (status) => {
    await refused('POST', '/api/v1/ack', ack({ status }), 'invalid_status');
  });

  it.each(['constructor', '__proto__', 'toString'])('refuses pop subscriptionMode "%s"', async (mode) => {
    await refused('GET', `/api/v1/pop/queue/checked?consumerGroup=g&subscriptionMode=${mode}`, undefined, 'invalid_subscription_mode');
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('refuses U+0000 in a pushed transactionId, an ack error, a leaseId and a message address', async () => {
    await refused('POST', '/api/v1/push', { items: [{ queue: 'checked', payload: 1, transactionId: 'a\u0000b' }] }, 'invalid_item');
    await refused('POST', '/api/v1/ack', ack({ status: 'failed', error: 'bad\u0000' }));
    await refused('POST', '/api/v1/ack', ack({ leaseId: '\u0000' }));
    await refused('POST', '/api/v1/lease/%00/extend', {});
    await refused('GET', `/api/v1/messages/${leased.partitionId}/%00`, undefined);
  });
});

// Date.parse takes each of these (rolling 02-30 over to March), PostgreSQL refuses it: a 500 before.
describe('timestamps PostgreSQL cannot read', () => {
  const bad = ['2026-02-30T12:00:00Z', '2025-02-29', '2026-04-31T00:00:00Z', '0000-01-01T00:00:00Z', '2026-01-31T12:00:00+16:00'];

  it.each(bad)('refuses %s as a window bound, a seek target and a subscription start', async (t) => {
    await refused('GET', `/api/v1/status?from=${encodeURIComponent(t)}`, undefined, 'invalid_query');
    await refused('GET', `/api/v1/dlq?to=${encodeURIComponent(t)}`, undefined, 'invalid_query');
    await refused('POST', '/api/v1/consumer-groups/g/queues/checked/seek', { timestamp: t }, 'invalid_seek');
    await refused('POST', '/api/v1/consumer-groups/g/subscription', { subscriptionTimestamp: t });
  });

  it.each(['2024-02-29T23:59:59.999999Z', '0001-01-01T00:00:00Z', '2026-01-31T12:00:00+15:59', '2026-01-31 12:00'])(
    'still takes %s',
    async (t) => {
      expect((await api.call('GET', `/api/v1/status?from=${encodeURIComponent(t)}`)).status).toBe(200);
    },
  );
});

// A key the route does not read was ignored before: a misplaced option configured the defaults,
// ?limit=10 popped one message. Each now names the key and the one that was meant.
describe('unknown keys', () => {
  it('refuses options at the top level of a configure body, pointing under options', async () => {
    const res = await refused('POST', '/api/v1/configure', { queue: 'checked', retryLimit: 5, leaseTime: 30 }, 'unknown_key');
    expect(res.error).toBe('unknown key `retryLimit` in the body: did you mean `options.retryLimit`?');
    expect((await refused('POST', '/api/v1/configure', { options: {} }, 'missing_key')).error).toBe('`queue` is required in the body');
    expect((await refused('POST', '/api/v1/configure', { queue: 'checked', options: { retrylimit: 1 } }, 'unknown_option')).error).toMatch(
      /did you mean "retryLimit"/,
    );
  });

  it('refuses an unknown key in an ack, a batch item, a batch body and a transaction operation', async () => {
    expect((await refused('POST', '/api/v1/ack', ack({ lease: 'x' }), 'unknown_key')).error).toBe(
      'unknown key `lease` in the body: did you mean `leaseId`?',
    );
    expect(
      (await refused('POST', '/api/v1/ack/batch', { acknowledgments: [ack({}), ack({ stauts: 'failed' })] }, 'unknown_key')).error,
    ).toBe('unknown key `stauts` in acknowledgments[1]: did you mean `status`?');
    expect((await refused('POST', '/api/v1/ack/batch', { acks: [ack({})] }, 'unknown_key')).error).toMatch(
      /`acks` in the body: did you mean `acknowledgments`/,
    );
    const { transactionId, partitionId } = ack({});
    expect((await refused('POST', '/api/v1/ack', { partitionId }, 'missing_key')).error).toBe('`transactionId` is required in the body');
    const op = { type: 'ack', transactionId, partitionId, status: 'completed' };
    expect((await refused('POST', '/api/v1/transaction', { operations: [{ ...op, group: 'g' }] }, 'unknown_key')).error).toBe(
      'unknown key `group` in operations[0]: did you mean `consumerGroup`?',
    );
    expect(
      (
        await refused(
          'POST',
          '/api/v1/transaction',
          { operations: [{ type: 'push', items: [{ queue: 'checked', data: 1 }] }] },
          'unknown_key',
        )
      ).error,
    ).toBe('unknown key `data` in operations[0].items[0]: did you mean `payload`?');
    expect((await refused('POST', '/api/v1/transaction', { operations: [op], leases: [] }, 'unknown_key')).error).toMatch(
      /did you mean `requiredLeases`/,
    );
  });

  it('refuses an unknown pop query parameter, suggesting the one meant', async () => {
    const res = await refused('GET', '/api/v1/pop/queue/checked?limit=10', undefined, 'unknown_parameter');
    expect(res.error).toBe('unknown query parameter `limit` in the query string: did you mean `batch`?');
    expect((await refused('GET', '/api/v1/pop/queue/checked?consumergroup=g', undefined, 'unknown_parameter')).error).toMatch(
      /did you mean `consumerGroup`/,
    );
  });
});
