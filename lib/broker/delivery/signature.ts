// Standard Webhooks signatures (docs/delivery.md): HMAC-SHA256 with the
// secret's bytes over "{id}.{timestamp}.{body}", base64, as `v1,<sig>`; one per signing secret,
// space-separated, so an endpoint holding either secret accepts the request during a rotation.
// WebCrypto, so the same code signs on Node and on workerd.

const PREFIX = 'whsec_';
const encoder = new TextEncoder();

// Importing a key costs more than the HMAC of a small batch; a dispatcher signs with few secrets.
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 1000;

function secretKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keys.set(secret, key);
  }
  return key;
}

/** `whsec_` + base64 (the prefix is optional, as the Standard Webhooks libraries take it). */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const b64 = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  const raw = atob(b64);
  if (raw.length === 0) throw new Error('a webhook secret has no key bytes');
  return Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
}

function toBase64(bytes: ArrayBuffer): string {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s);
}

/** The `webhook-signature` header value: `v1,<base64>` per secret, space-separated. */
export async function signatureHeader(secrets: readonly string[], id: string, timestampSec: number, body: string): Promise<string> {
  if (secrets.length === 0) throw new Error('signing a delivery needs at least one secret');
  const content = encoder.encode(`${id}.${timestampSec}.${body}`);
  const sigs = await Promise.all(secrets.map(async (s) => `v1,${toBase64(await crypto.subtle.sign('HMAC', await secretKey(s), content))}`));
  return sigs.join(' ');
}
