// Encryption at rest through the real routes: stored blobs hold ciphertext, reads decrypt, a wrong or missing key fails loudly.
import { beforeAll, describe, expect, it } from 'vitest';
import { decryptPayload, importEncryptionKey } from '../../lib/broker/encryption.js';
import { unpackFrames } from '../../lib/codec/frame.js';
import { decompressSegment } from '../../lib/codec/segment.js';
import { ensureZstd } from '../../lib/codec/zstd.js';
import { useDatabase } from '../support/db.js';
import { callerFor, type Caller } from './support.js';

const KEY = '5f'.repeat(32);
const OTHER_KEY = 'c3'.repeat(32);
const SECRET_TEXT = '4111-1111-1111-1111';
// Sent as raw text so the integer beyond 2^53 reaches the server intact; it must come back verbatim.
const PAYLOAD_TEXT = `{"card":"${SECRET_TEXT}","amount":12345678901234567890}`;
const payload = JSON.parse(PAYLOAD_TEXT);
const pushBody = (queue: string, transactionId?: string) =>
  `{"items":[{"queue":${JSON.stringify(queue)},${transactionId ? `"transactionId":${JSON.stringify(transactionId)},` : ''}"payload":${PAYLOAD_TEXT}}]}`;
const TENANT = 'tenant-enc';

const db = useDatabase();
let withKey: Caller;
let wrongKey: Caller;
let noKey: Caller;

beforeAll(async () => {
  withKey = await callerFor(db, TENANT, 'enc-producer', { config: { encryptionKey: KEY } });
  wrongKey = await callerFor(db, TENANT, 'enc-producer', { config: { encryptionKey: OTHER_KEY } });
  noKey = await callerFor(db, TENANT, 'enc-producer', { config: { encryptionKey: undefined } });
  await ensureZstd();
});

/** The decompressed frames of every stored segment of a queue, oldest first. */
async function storedFrames(queue: string) {
  const rows = await db().query<{ blob: Uint8Array }>(
    `SELECT s.blob FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
     JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant_id = $1 AND q.name = $2 ORDER BY p.id, s.base_offset`,
    [TENANT, queue],
  );
  const bodies = rows.map((r) => decompressSegment(r.blob));
  return { bodies, frames: bodies.flatMap((b) => unpackFrames(b)) };
}

const contains = (haystack: Uint8Array, needle: string) => Buffer.from(haystack).includes(Buffer.from(needle));

async function configureVault(queue: string) {
  const res = await withKey('POST', '/api/v1/configure', { queue, options: { encryptionEnabled: true } });
  expect(res.status).toBe(200);
  expect(res.body.options.encryptionEnabled).toBe(true);
}

describe('encryption at rest', () => {
  it('the stored segment of an encrypted queue holds ciphertext, not the payload', async () => {
    await configureVault('vault');
    const pushed = await withKey('POST', '/api/v1/push', pushBody('vault', 'v-1'));
    expect(pushed.status).toBe(201);
    const { bodies, frames } = await storedFrames('vault');
    expect(frames).toHaveLength(1);
    expect(frames[0]!.encrypted).toBe(true);
    expect(contains(bodies[0]!, SECRET_TEXT)).toBe(false);
    expect(frames[0]!.transactionId).toBe('v-1');
    const plain = await decryptPayload(await importEncryptionKey(KEY), frames[0]!.payload);
    expect(new TextDecoder().decode(plain)).toBe(PAYLOAD_TEXT);
  });

  it('a queue without encryption stores the payload as sent (the check above can see plaintext)', async () => {
    await withKey('POST', '/api/v1/push', pushBody('open'));
    const { bodies, frames } = await storedFrames('open');
    expect(frames[0]!.encrypted).toBe(false);
    expect(contains(bodies[0]!, SECRET_TEXT)).toBe(true);
  });

  it('pop and message detail return the decrypted payload', async () => {
    const popped = await withKey('GET', '/api/v1/pop/queue/vault');
    expect(popped.status).toBe(200);
    const m = popped.body.messages[0];
    expect(m.transactionId).toBe('v-1');
    expect(popped.text).toContain('12345678901234567890');
    expect(m.data.card).toBe(SECRET_TEXT);
    const detail = await withKey('GET', `/api/v1/messages/${m.partitionId}/v-1`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain(SECRET_TEXT);
  });

  it('the DLQ keeps the payload encrypted and lists it decrypted', async () => {
    await configureVault('vault-dlq');
    await withKey('POST', '/api/v1/push', pushBody('vault-dlq', 'd-1'));
    const m = (await withKey('GET', '/api/v1/pop/queue/vault-dlq')).body.messages[0];
    const ack = await withKey('POST', '/api/v1/ack', {
      transactionId: 'd-1',
      partitionId: m.partitionId,
      leaseId: m.leaseId,
      status: 'dlq',
      error: 'poison',
    });
    expect(ack.status).toBe(200);
    const rows = await db().query<{ payload: Uint8Array; encrypted: boolean }>(
      'SELECT payload, encrypted FROM queen.log_dlq WHERE transaction_id = $1',
      ['d-1'],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.encrypted).toBe(true);
    expect(contains(rows[0]!.payload, SECRET_TEXT)).toBe(false);
    const listed = await withKey('GET', '/api/v1/dlq?queue=vault-dlq');
    expect(listed.body.messages.map((r: any) => r.data)).toEqual([payload]);
    expect(listed.text).toContain('12345678901234567890');
  });

  it('a different key fails loudly with decryption_failed instead of returning garbage', async () => {
    await withKey('POST', '/api/v1/push', pushBody('vault', 'v-2'));
    const popped = await wrongKey('GET', '/api/v1/pop/queue/vault?consumerGroup=wrong-key');
    expect(popped.status).toBe(500);
    expect(popped.body.code).toBe('decryption_failed');
    expect(popped.text).not.toContain(SECRET_TEXT);
    const { frames } = await storedFrames('vault');
    const detail = await wrongKey('GET', `/api/v1/messages/${await partitionIdOf('vault')}/${frames[0]!.transactionId}`);
    expect([detail.status, detail.body.code]).toEqual([500, 'decryption_failed']);
    const listed = await wrongKey('GET', '/api/v1/dlq?queue=vault-dlq');
    expect([listed.status, listed.body.code]).toEqual([500, 'decryption_failed']);
  });

  it('a retried DLQ message is stored encrypted once and pops decrypted', async () => {
    const retried = await withKey('POST', '/api/v1/messages/' + (await partitionIdOf('vault-dlq')) + '/d-1/retry', {});
    expect(retried.status).toBe(200);
    const { bodies, frames } = await storedFrames('vault-dlq');
    expect(frames.map((f) => f.encrypted)).toEqual([true, true]);
    expect(bodies.some((b) => contains(b, SECRET_TEXT))).toBe(false);
    const popped = await withKey('GET', '/api/v1/pop/queue/vault-dlq');
    expect(popped.body.messages.map((m: any) => m.data)).toEqual([payload]);
  });

  it('a push inside a transaction is encrypted too', async () => {
    await configureVault('vault-txn');
    const res = await withKey(
      'POST',
      '/api/v1/transaction',
      `{"operations":[{"type":"push","items":[{"queue":"vault-txn","payload":${PAYLOAD_TEXT}}]}]}`,
    );
    expect(res.body.success).toBe(true);
    const { bodies, frames } = await storedFrames('vault-txn');
    expect(frames.map((f) => f.encrypted)).toEqual([true]);
    expect(contains(bodies[0]!, SECRET_TEXT)).toBe(false);
  });

  it('with no key configured, a push to an encrypted queue is refused and nothing is stored', async () => {
    await configureVault('vault-nokey');
    const before = (await storedFrames('vault-nokey')).frames.length;
    const openBefore = (await storedFrames('open')).frames.length;
    const res = await noKey('POST', '/api/v1/push', {
      items: [
        { queue: 'vault-nokey', payload },
        { queue: 'open', payload: 2 },
      ],
    });
    expect(res.status).toBe(500);
    expect(res.body.error).toMatch(/QUEEN_ENCRYPTION_KEY/);
    expect((await storedFrames('vault-nokey')).frames.length).toBe(before);
    expect((await storedFrames('open')).frames.length).toBe(openBefore);
  });
});

async function partitionIdOf(queue: string): Promise<string> {
  const rows = await db().query<{ id: string }>(
    'SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant_id = $1 AND q.name = $2',
    [TENANT, queue],
  );
  return String(rows[0]!.id);
}
