// DLQ and message payloads leave as the raw JSON text the producer sent (SPEC §1), decrypted
// when stored encrypted, and are spliced into the response text rather than re-serialised.
import type { Config } from '../config.js';
import { decryptPayload, requireEncryptionKey } from './encryption.js';

const decoder = new TextDecoder();

/** The payload's JSON text, plaintext; decrypts when the frame was stored encrypted. */
export async function payloadText(payload: Uint8Array, encrypted: boolean, config: Pick<Config, 'encryptionKey'>, queue: string): Promise<string> {
  const plain = encrypted ? await decryptPayload(await requireEncryptionKey(config, queue), payload) : payload;
  return decoder.decode(plain);
}

/** JSON text of `fields` with `data` set to `raw` verbatim. */
export function withRawData(fields: Record<string, unknown>, raw: string): string {
  const rest = JSON.stringify(fields);
  return `{"data":${raw}${rest === '{}' ? '}' : `,${rest.slice(1)}`}`;
}
