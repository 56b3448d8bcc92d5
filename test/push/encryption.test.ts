import { describe, expect, it } from 'vitest';
import { decryptPayload, importEncryptionKey } from '../../lib/broker/encryption.js';
import { observe, type StatementLog } from '../../lib/db/client.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { countRows, item, storedMessages } from './helpers.js';

const db = useDatabase();

const KEY = 'ab'.repeat(32);
const encryptedQueue = (name: string) =>
  db().query(`INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('default', $1, true)`, [name]);

describe('push to a queue with encryptionEnabled', () => {
  it('stores payloads AES-GCM encrypted with flag 4, and later pushes encrypt up front in one statement', async () => {
    await encryptedQueue('secret');
    const log: StatementLog = { statements: [] };
    const { call } = testClient(observe(db(), log), { config: { encryptionKey: KEY } });
    const first = await call('POST', '/api/v1/push', { items: [item('secret', { card: '4111' }, { transactionId: 't1' })] });
    expect(first.status).toBe(201);
    expect(log.statements).toHaveLength(2);
    log.statements.length = 0;
    const second = await call('POST', '/api/v1/push', '{"items":[{"queue":"secret","payload":{ "n" : 1.0 }}]}');
    expect(second.status).toBe(201);
    expect(log.statements).toHaveLength(1);

    const stored = await storedMessages(db(), 's.partition_id = $1', [first.body[0].partition_id]);
    expect(stored.map((m) => m.encrypted)).toEqual([true, true]);
    expect(stored[0]!.text).not.toContain('4111');
    const key = await importEncryptionKey(KEY);
    const plain = await Promise.all(stored.map(async (m) => new TextDecoder().decode(await decryptPayload(key, m.payload))));
    expect(plain).toEqual(['{"card":"4111"}', '{ "n" : 1.0 }']);
    expect(stored[0]!.messageId).toBe(first.body[0].message_id);
  });

  it('refuses with 500 encryption_key_missing and stores nothing when no key is configured', async () => {
    await encryptedQueue('secret-nokey');
    const before = await countRows(db());
    const res = await testClient(db, { config: { encryptionKey: undefined } }).call('POST', '/api/v1/push', {
      items: [item('plain-neighbour', 1), item('secret-nokey', { card: '4111' })],
    });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('encryption_key_missing');
    expect(res.body.error).toMatch(/secret-nokey.*QUEEN_ENCRYPTION_KEY/);
    const after = await countRows(db());
    expect([after.segments, after.txns]).toEqual([before.segments, before.txns]);
  });

  it('stores plaintext when the queue turned encryption off since this process last saw it', async () => {
    await encryptedQueue('was-secret');
    const { call } = testClient(db, { config: { encryptionKey: KEY } });
    await call('POST', '/api/v1/push', { items: [item('was-secret', 1)] });
    await db().query(`UPDATE queen.queues SET encryption_enabled = false WHERE name = 'was-secret'`);
    const res = await call('POST', '/api/v1/push', { items: [item('was-secret', { open: true })] });
    const stored = await storedMessages(db(), 's.partition_id = $1', [res.body[0].partition_id]);
    expect(stored.map((m) => m.encrypted)).toEqual([true, false]);
    expect(stored[1]!.text).toBe('{"open":true}');
  });

  it('answers a duplicate on an encrypted queue with the original message id', async () => {
    await encryptedQueue('secret-dup');
    const { call } = testClient(db, { config: { encryptionKey: KEY } });
    const a = await call('POST', '/api/v1/push', { items: [item('secret-dup', 1, { transactionId: 'k' })] });
    const b = await call('POST', '/api/v1/push', { items: [item('secret-dup', 1, { transactionId: 'k' })] });
    expect(b.body[0]).toMatchObject({ status: 'duplicate', message_id: a.body[0].message_id, offset: 0 });
  });
});
