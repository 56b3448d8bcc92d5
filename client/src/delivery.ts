// Receiving push deliveries (docs/clients.md#receiving-push-deliveries): the Standard Webhooks
// signature checked over the raw body with WebCrypto, then the handler's outcome as the answer.
import type { DeliveryAnswer, DeliveryBody } from './wire.js';

export type Secrets = string | readonly string[];
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/** A verified delivery: the body the dispatcher signed, and its `webhook-id` (stable across retries of one batch). */
export type Delivery<T = unknown> = DeliveryBody<T> & { webhookId: string };

export class DeliveryVerificationError extends Error {
  override name = 'DeliveryVerificationError';
  constructor(
    readonly code: 'missing_headers' | 'timestamp_out_of_range' | 'invalid_signature' | 'invalid_body',
    message: string,
  ) {
    super(message);
  }
}

const TOLERANCE_SECONDS = 5 * 60;
const encoder = new TextEncoder();

function header(headers: HeaderSource, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const found = Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return (Array.isArray(found) ? found[0] : found) ?? null;
}

const bytes = (body: string | Uint8Array | ArrayBuffer) =>
  typeof body === 'string' ? encoder.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body);

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** Standard Webhooks secrets are `whsec_` + base64 of the key bytes. */
const keyOf = (secret: string) =>
  crypto.subtle.importKey('raw', fromBase64(secret.replace(/^whsec_/, '')), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

/**
 * Checks a delivery's signature over the raw body with any of `secrets` and that it was signed
 * within 5 minutes; returns the parsed body, or throws DeliveryVerificationError.
 */
export async function verifyDelivery<T = unknown>(
  request: Request | { headers: HeaderSource; body: string | Uint8Array | ArrayBuffer },
  secrets: Secrets,
  now = Date.now(),
): Promise<Delivery<T>> {
  const raw = request instanceof Request ? new Uint8Array(await request.arrayBuffer()) : bytes(request.body);
  const id = header(request.headers, 'webhook-id');
  const timestamp = header(request.headers, 'webhook-timestamp');
  const signatures = header(request.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new DeliveryVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - seconds) > TOLERANCE_SECONDS) {
    throw new DeliveryVerificationError('timestamp_out_of_range', `webhook-timestamp ${timestamp} is not within 5 minutes of now`);
  }
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + raw.length);
  signed.set(prefix);
  signed.set(raw, prefix.length);
  const candidates = signatures.split(' ').flatMap((s) => (s.startsWith('v1,') ? [s.slice(3)] : []));
  let valid = false;
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const key = await keyOf(secret);
    for (const candidate of candidates) {
      let signature;
      try {
        signature = fromBase64(candidate);
      } catch {
        continue;
      }
      // subtle.verify compares in constant time.
      if (await crypto.subtle.verify('HMAC', key, signature, signed)) valid = true;
    }
  }
  if (!valid) throw new DeliveryVerificationError('invalid_signature', 'no webhook-signature matches the given secrets');
  try {
    return { ...(JSON.parse(new TextDecoder().decode(raw)) as DeliveryBody<T>), webhookId: id };
  } catch {
    throw new DeliveryVerificationError('invalid_body', 'the signed body is not JSON');
  }
}

export type DeliveryFunction<T, A extends unknown[]> = (
  delivery: Delivery<T>,
  ...rest: A
) => DeliveryAnswer | void | Promise<DeliveryAnswer | void>;

/** The answer for one delivery: 401 bad signature, 200 (with the handler's acks) or 500 when it throws. */
export async function answerDelivery<T>(
  request: { headers: HeaderSource; body: string | Uint8Array | ArrayBuffer },
  secrets: Secrets,
  handler: (delivery: Delivery<T>) => DeliveryAnswer | void | Promise<DeliveryAnswer | void>,
): Promise<{ status: number; body: string | null }> {
  let delivery: Delivery<T>;
  try {
    delivery = await verifyDelivery<T>(request, secrets);
  } catch (err) {
    if (!(err instanceof DeliveryVerificationError)) throw err;
    return { status: 401, body: JSON.stringify({ error: err.message, code: err.code }) };
  }
  try {
    const answer = await handler(delivery);
    return { status: 200, body: answer?.acks ? JSON.stringify({ acks: answer.acks }) : null };
  } catch (err) {
    // Any answer but 2xx, 410, 429 or 503 is a failed attempt, charged to the retry budget.
    return { status: 500, body: JSON.stringify({ error: err instanceof Error ? err.message : String(err), code: 'handler_failed' }) };
  }
}

/**
 * A fetch-style handler (Workers, Deno, Bun, Node's fetch servers): `secret` may be read from the
 * Worker's env, and the handler gets env and ctx too.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- so `(env) => env.SECRET` compiles without naming Env.
export function deliveryHandler<T = unknown, Env = any, Ctx = unknown>(
  secret: Secrets | ((env: Env) => Secrets),
  handler: DeliveryFunction<T, [env: Env, ctx: Ctx]>,
): (request: Request, env: Env, ctx: Ctx) => Promise<Response> {
  return async (request, env, ctx) => {
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
    const secrets = typeof secret === 'function' ? secret(env) : secret;
    const body = new Uint8Array(await request.arrayBuffer());
    const answer = await answerDelivery<T>({ headers: request.headers, body }, secrets, (d) => handler(d, env, ctx));
    return new Response(answer.body, { status: answer.status, headers: answer.body ? { 'content-type': 'application/json' } : {} });
  };
}
