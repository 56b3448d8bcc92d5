// Webhook signing secrets and endpoint header values (docs/delivery.md#secrets): minted here, and
// sealed at rest with QUEEN_ENCRYPTION_KEY's AES-GCM when it is set, so a database dump alone
// cannot forge deliveries or call the endpoint with its credentials.
import type { Config } from '../../config.js';
import { QueenError } from '../../errors.js';
import { decryptPayload, encryptPayload, importEncryptionKey } from '../encryption.js';

const SECRET_BYTES = 32;
// What a stored value starts with says how to read it; a key set later still opens old plain rows.
const PLAIN = 'plain:';
const SEALED = 'aes-gcm:';

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function mintWebhookSecret(): string {
  return `whsec_${toBase64(globalThis.crypto.getRandomValues(new Uint8Array(SECRET_BYTES)))}`;
}

/** `plain` as stored: encrypted with QUEEN_ENCRYPTION_KEY when it is set, else as is, behind a prefix saying which. */
export async function sealText(config: Pick<Config, 'encryptionKey'>, plain: string): Promise<string> {
  if (!config.encryptionKey) return PLAIN + plain;
  const key = await importEncryptionKey(config.encryptionKey);
  return SEALED + toBase64(await encryptPayload(key, new TextEncoder().encode(plain)));
}

export async function openText(config: Pick<Config, 'encryptionKey'>, stored: string): Promise<string> {
  if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
  if (!stored.startsWith(SEALED)) {
    throw new QueenError(
      500,
      'invalid_sealed_value',
      'A stored subscription secret or header set has an unknown format; rotate the secret and set the headers again.',
    );
  }
  if (!config.encryptionKey) {
    throw new QueenError(
      500,
      'encryption_key_missing',
      'Subscription secrets were sealed with QUEEN_ENCRYPTION_KEY, which is not set now; set it to the key they were sealed with.',
    );
  }
  const key = await importEncryptionKey(config.encryptionKey);
  return new TextDecoder().decode(await decryptPayload(key, fromBase64(stored.slice(SEALED.length))));
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
