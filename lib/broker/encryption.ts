// Payload encryption at rest (frame flag 4): AES-256-GCM through WebCrypto, so it runs on Node and workerd.
// Stored layout: 12-byte random IV | ciphertext | 16-byte GCM tag (WebCrypto appends the tag).
import type { Config } from '../config.js';
import { QueenError } from '../errors.js';

export const IV_BYTES = 12;
export const TAG_BYTES = 16;
const KEY_HEX = /^[0-9a-fA-F]{64}$/;

const keys = new Map<string, Promise<CryptoKey>>();

/** Imports a 64-hex-character key once per process; later calls with the same hex reuse it. */
export function importEncryptionKey(hex: string): Promise<CryptoKey> {
  let key = keys.get(hex);
  if (!key) {
    if (!KEY_HEX.test(hex)) {
      return Promise.reject(
        new QueenError(
          500,
          'invalid_encryption_key',
          `QUEEN_ENCRYPTION_KEY must be 64 hex characters (32 bytes); it has ${hex.length} characters or non-hex ones. ` +
            'Generate one with: openssl rand -hex 32',
        ),
      );
    }
    key = globalThis.crypto.subtle.importKey('raw', hexToBytes(hex), { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
    keys.set(hex, key);
  }
  return key;
}

/** The configured key, or a 500 that says how to configure one; used before storing or reading encrypted payloads. */
export function requireEncryptionKey(config: Pick<Config, 'encryptionKey'>, queue?: string): Promise<CryptoKey> {
  if (!config.encryptionKey) {
    const which = queue === undefined ? 'This queue' : `Queue "${queue}"`;
    return Promise.reject(
      new QueenError(
        500,
        'encryption_key_missing',
        `${which} has encryptionEnabled but QUEEN_ENCRYPTION_KEY is not set; ` +
          'set it to 64 hex characters (openssl rand -hex 32) or disable encryption on the queue.',
      ),
    );
  }
  return importEncryptionKey(config.encryptionKey);
}

export async function encryptPayload(key: CryptoKey, plaintext: Uint8Array): Promise<Uint8Array> {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await globalThis.crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plaintext as Uint8Array<ArrayBuffer>));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv, 0);
  out.set(sealed, IV_BYTES);
  return out;
}

/** Throws `decryption_failed` on a wrong key or a tampered/truncated blob: GCM authenticates, so it never returns garbage. */
export async function decryptPayload(key: CryptoKey, blob: Uint8Array): Promise<Uint8Array> {
  if (blob.length < IV_BYTES + TAG_BYTES) {
    throw decryptionFailed(`the stored payload is ${blob.length} bytes, shorter than IV and tag`);
  }
  try {
    const plain = await globalThis.crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: blob.subarray(0, IV_BYTES) as Uint8Array<ArrayBuffer> },
      key,
      blob.subarray(IV_BYTES) as Uint8Array<ArrayBuffer>,
    );
    return new Uint8Array(plain);
  } catch (err) {
    if (err instanceof QueenError) throw err;
    throw decryptionFailed('authentication failed');
  }
}

function decryptionFailed(detail: string): QueenError {
  return new QueenError(
    500,
    'decryption_failed',
    `Cannot decrypt a stored payload (${detail}): ` +
      'QUEEN_ENCRYPTION_KEY does not match the key it was encrypted with, or the data was altered.',
  );
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
