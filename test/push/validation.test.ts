import { beforeAll, describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { countRows, item } from './helpers.js';

const db = useDatabase();
beforeAll(async () => {
  // One queue already exists, so "nothing written" also covers an existing partition.
  await testClient(db).call('POST', '/api/v1/push', { items: [item('exists', 1)] });
});

const good = item('exists', { ok: true });

async function refused(body: unknown, status: number, code: string, message: RegExp, config = {}) {
  const before = await countRows(db());
  const res = await testClient(db, { config }).call('POST', '/api/v1/push', body);
  expect(res.status).toBe(status);
  expect(res.body.code).toBe(code);
  expect(res.body.error).toMatch(message);
  expect(await countRows(db())).toEqual(before);
}

describe('bad push input writes nothing', () => {
  it('refuses a body that is not JSON', async () => {
    await refused('{"items": [', 400, 'invalid_json', /not valid JSON/);
    await refused('items=1', 400, 'invalid_json', /line 1, column 1/);
    await refused('{"items":[{"queue":"exists","payload":1,}]}', 400, 'invalid_json', /column/);
  });

  it('refuses a body without an items array', async () => {
    await refused({}, 400, 'invalid_request', /items is required/);
    await refused({ items: { queue: 'x' } }, 400, 'invalid_request', /items/);
    await refused([good], 400, 'invalid_request', /JSON object/);
    await refused('null', 400, 'invalid_request', /JSON object/);
  });

  it('names the index and field of the first bad item, after good ones', async () => {
    await refused({ items: [good, 'text'] }, 400, 'invalid_item', /items\[1\] must be an object/);
    await refused({ items: [good, { payload: 1 }] }, 400, 'missing_key', /^`queue` is required in items\[1\]$/);
    await refused({ items: [good, good, item(42 as never, 1)] }, 400, 'invalid_item', /items\[2\]\.queue: queue must be a string/);
    await refused({ items: [good, item('', 1)] }, 400, 'invalid_item', /items\[1\]\.queue: queue must not be empty/);
    await refused({ items: [good, item('q'.repeat(256), 1)] }, 400, 'invalid_item', /items\[1\]\.queue: queue must be at most 255/);
    await refused({ items: [good, item('a/b', 1)] }, 400, 'invalid_item', /items\[1\]\.queue: .*"\/"/);
    await refused({ items: [good, item(' lead', 1)] }, 400, 'invalid_item', /items\[1\]\.queue: .*spaces/);
    await refused({ items: [good, item('ctl\u0001', 1)] }, 400, 'invalid_item', /control characters/);
    await refused(
      { items: [good, item('exists', 1, { partition: '' })] },
      400,
      'invalid_item',
      /items\[1\]\.partition: partition must not be empty/,
    );
    await refused({ items: [good, item('exists', 1, { partition: 'p'.repeat(256) })] }, 400, 'invalid_item', /items\[1\]\.partition/);
    await refused(
      { items: [good, item('exists', 1, { transactionId: '' })] },
      400,
      'invalid_item',
      /items\[1\]\.transactionId: transactionId must not be empty/,
    );
    await refused(
      { items: [good, item('exists', 1, { transactionId: 't'.repeat(256) })] },
      400,
      'invalid_item',
      /items\[1\]\.transactionId/,
    );
    await refused({ items: [good, item('exists', 1, { transactionId: 7 })] }, 400, 'invalid_item', /items\[1\]\.transactionId/);
  });

  it('refuses an unknown key in an item or the body, naming it and the key it resembles', async () => {
    // `data` is what pop returns; accepted, it stored null and the payload was lost.
    await refused(
      { items: [{ queue: 'exists', data: { a: 1 } }] },
      400,
      'unknown_key',
      /^unknown key `data` in items\[0\]: did you mean `payload`\?$/,
    );
    await refused(
      { items: [good, { ...good, partiton: 'eu' }] },
      400,
      'unknown_key',
      /^unknown key `partiton` in items\[1\]: did you mean `partition`\?$/,
    );
    await refused({ items: [good, { ...good, TransactionID: 'x' }] }, 400, 'unknown_key', /did you mean `transactionId`\?/);
    await refused(
      { items: [good, { ...good, colour: 'red' }] },
      400,
      'unknown_key',
      /^unknown key `colour` in items\[1\]: the known keys are queue, partition, payload, transactionId, traceId, producerSub\.$/,
    );
    await refused({ items: [good], queue: 'exists' }, 400, 'unknown_key', /^unknown key `queue` in the body/);
    await refused(
      '{"items":[{"queue":"exists","payload":1,"__proto__":{}}]}',
      400,
      'unknown_key',
      /^unknown key `__proto__` in items\[0\]/,
    );
  });

  it('refuses a traceId that is not a UUID', async () => {
    await refused(
      { items: [good, item('exists', 1, { traceId: 'trace-1' })] },
      400,
      'invalid_item',
      /items\[1\]\.traceId: traceId must be a UUID/,
    );
    await refused({ items: [item('exists', 1, { traceId: 12 })] }, 400, 'invalid_item', /items\[0\]\.traceId/);
    await refused({ items: [item('exists', 1, { traceId: '0193a5b2-0000-4000-8000-00000000000' })] }, 400, 'invalid_item', /traceId/);
  });

  it('answers 413 to a body over the limit', async () => {
    await refused({ items: [item('exists', 'x'.repeat(2000))] }, 413, 'body_too_large', /exceeds 1000 bytes/, { maxBodyBytes: 1000 });
  });

  it('answers 413 naming the item whose payload is over the message limit', async () => {
    await refused({ items: [good, item('exists', 'x'.repeat(200))] }, 413, 'message_too_large', /items\[1\]\.payload is 202 bytes/, {
      maxMessageBytes: 100,
    });
  });

  it('accepts a null trace id and partition, any UUID version, and a missing payload as null', async () => {
    const res = await testClient(db).call('POST', '/api/v1/push', {
      items: [
        item('exists', 1, { traceId: null, partition: null, transactionId: null }),
        item('exists', 1, { traceId: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' }),
        { queue: 'exists' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body[1].trace_id).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  });
});
