import { describe, expect, it } from 'vitest';
import { QueenError } from '../../lib/errors.js';
import {
  decryptPayload,
  encryptPayload,
  importEncryptionKey,
  IV_BYTES,
  requireEncryptionKey,
  TAG_BYTES,
} from '../../lib/broker/encryption.js';

const KEY_A = 'a'.repeat(64);
const KEY_B = '0123456789abcdef'.repeat(4);
const text = (s: string) => new TextEncoder().encode(s);

async function rejection(p: Promise<unknown>): Promise<QueenError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(QueenError);
  return err as QueenError;
}

describe('payload encryption', () => {
  it('round-trips a payload and stores IV, ciphertext and tag without the plaintext', async () => {
    const key = await importEncryptionKey(KEY_A);
    const plain = text('{"card":"4111-1111-1111-1111"}');
    const blob = await encryptPayload(key, plain);
    expect(blob.length).toBe(IV_BYTES + plain.length + TAG_BYTES);
    expect(Buffer.from(blob).includes(Buffer.from('4111-1111'))).toBe(false);
    expect(new TextDecoder().decode(await decryptPayload(key, blob))).toBe('{"card":"4111-1111-1111-1111"}');
  });

  it('round-trips an empty payload', async () => {
    const key = await importEncryptionKey(KEY_A);
    const blob = await encryptPayload(key, new Uint8Array(0));
    expect((await decryptPayload(key, blob)).length).toBe(0);
  });

  it('uses a fresh random IV for every payload', async () => {
    const key = await importEncryptionKey(KEY_A);
    const a = await encryptPayload(key, text('same'));
    const b = await encryptPayload(key, text('same'));
    expect(Buffer.from(a.subarray(0, IV_BYTES)).equals(Buffer.from(b.subarray(0, IV_BYTES)))).toBe(false);
  });

  it('imports each key once and reuses it', async () => {
    expect(importEncryptionKey(KEY_B)).toBe(importEncryptionKey(KEY_B));
  });

  it('fails loudly with decryption_failed when the key does not match', async () => {
    const blob = await encryptPayload(await importEncryptionKey(KEY_A), text('secret'));
    const err = await rejection(decryptPayload(await importEncryptionKey(KEY_B), blob));
    expect(err.status).toBe(500);
    expect(err.code).toBe('decryption_failed');
    expect(err.message).toMatch(/QUEEN_ENCRYPTION_KEY does not match/);
  });

  it('fails loudly when one bit of the stored blob is flipped', async () => {
    const key = await importEncryptionKey(KEY_A);
    const blob = await encryptPayload(key, text('secret'));
    for (const i of [0, IV_BYTES, blob.length - 1]) {
      const tampered = blob.slice();
      tampered[i] = tampered[i]! ^ 1;
      expect((await rejection(decryptPayload(key, tampered))).code).toBe('decryption_failed');
    }
  });

  it('fails loudly on a blob too short to hold IV and tag', async () => {
    const key = await importEncryptionKey(KEY_A);
    expect((await rejection(decryptPayload(key, new Uint8Array(20)))).code).toBe('decryption_failed');
  });

  it('rejects a key that is not 64 hex characters with a message saying how to make one', async () => {
    for (const bad of ['', 'abc', 'g'.repeat(64), 'a'.repeat(63), 'a'.repeat(66)]) {
      const err = await rejection(importEncryptionKey(bad));
      expect(err.code).toBe('invalid_encryption_key');
      expect(err.message).toMatch(/64 hex characters/);
    }
  });

  it('refuses to encrypt when no key is configured, naming the queue and the variable', async () => {
    const err = await rejection(requireEncryptionKey({ encryptionKey: undefined }, 'orders'));
    expect(err.status).toBe(500);
    expect(err.code).toBe('encryption_key_missing');
    expect(err.message).toMatch(/Queue "orders".*QUEEN_ENCRYPTION_KEY/);
  });
});
