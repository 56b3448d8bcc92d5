// A subscription's endpoint (docs/delivery.md): which URLs are allowed, and the one HTTP request of
// a delivery attempt. The rules are checked when a subscription is made and again against the
// address a delivery actually connects to, so a name that later resolves elsewhere (DNS
// rebinding) reaches nothing private.
import { QueenError } from '../../errors.js';
import { blockedAddress, blockedHostName } from './address.js';
import { joinChunks, MAX_ANSWER_BYTES, type DeliveryRequest, type RawAnswer } from './transport.js';

export type { DeliveryRequest } from './transport.js';

export interface EndpointAnswer {
  /** The HTTP status, or null when there was no answer. */
  status: number | null;
  /** Why there was no answer: timeout, refused, dns, tls, url_not_allowed …; null with a status. */
  error: string | null;
  /** Retry-After in ms (seconds or an HTTP date), null when absent or unreadable. */
  retryAfterMs: number | null;
  /** The first 1 KiB of the body, for the attempts log. */
  body: string;
  /** The whole body (for the `acks`), null when it is over 1 MiB. */
  fullBody: string | null;
  latencyMs: number;
}

const LOGGED_BYTES = 1024;

const RULE =
  'Subscription URLs must be https: and reach a public address (no loopback, private, link-local, CGNAT, unspecified or ' +
  'cloud-metadata address); QUEEN_DELIVERY_ALLOW_PRIVATE=1 lifts this for local development and tests.';

const notAllowed = (why: string) => new QueenError(400, 'url_not_allowed', `${why}. ${RULE}`);

/** Node resolves names (and connects only to checked addresses); workerd has no DNS API and Cloudflare refuses private targets itself. */
const onNode =
  typeof process !== 'undefined' &&
  !!process.versions?.node &&
  (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent !== 'Cloudflare-Workers';

/** What is wrong with a URL before any lookup (scheme, name, literal address), or null. */
export function staticUrlProblem(url: string, allowPrivate: boolean): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `"${url}" is not an absolute URL`;
  }
  if (u.protocol !== 'https:' && !(allowPrivate && u.protocol === 'http:')) return `${u.protocol} URLs are not allowed`;
  if (allowPrivate) return null;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const why = blockedHostName(host) ?? blockedAddress(host);
  return why && `${u.hostname} is a ${why} address`;
}

/** Refuses (400 url_not_allowed) a URL a subscription may not deliver to; on Node every address its host resolves to is checked. */
export async function checkEndpointUrl(url: string, opts: { allowPrivate: boolean }): Promise<void> {
  const problem = staticUrlProblem(url, opts.allowPrivate);
  if (problem) throw notAllowed(problem);
  if (opts.allowPrivate || !onNode) return;
  const host = new URL(url).hostname;
  if (blockedAddress(host) !== null || host.startsWith('[')) return;
  const { resolveChecked } = await import('./endpoint-node.js');
  try {
    await resolveChecked(host);
  } catch (err) {
    // A name that does not resolve (yet) reaches nothing: deliveries will fail visibly in the attempts log.
    if ((err as { code?: string }).code === 'URL_NOT_ALLOWED') throw notAllowed((err as Error).message);
  }
}

/** One delivery attempt: POST, no redirects followed, at most timeoutMs. Never throws for what the endpoint does. */
export async function sendDelivery(url: string, init: DeliveryRequest): Promise<EndpointAnswer> {
  const started = performance.now();
  const answer = (a: Partial<EndpointAnswer>): EndpointAnswer => ({
    status: null,
    error: null,
    retryAfterMs: null,
    body: '',
    fullBody: null,
    ...a,
    latencyMs: Math.round(performance.now() - started),
  });
  const problem = staticUrlProblem(url, init.allowPrivate);
  if (problem) return answer({ error: `url_not_allowed: ${problem}` });
  try {
    const raw = onNode ? await (await import('./endpoint-node.js')).postNode(url, init) : await postFetch(url, init);
    const text = new TextDecoder().decode(raw.body);
    return answer({
      status: raw.status,
      retryAfterMs: parseRetryAfter(raw.retryAfter),
      body: text.length > LOGGED_BYTES ? text.slice(0, LOGGED_BYTES) : text,
      fullBody: raw.truncated ? null : text,
    });
  } catch (err) {
    return answer({ error: describeFailure(err) });
  }
}

// workerd: fetch with redirect 'manual' hands back the 3xx itself. Cloudflare's edge refuses
// connections to private and loopback addresses, so there is no address to check here.
async function postFetch(url: string, init: DeliveryRequest): Promise<RawAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(init.timeoutMs),
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (size > MAX_ANSWER_BYTES) {
        truncated = true;
        await reader.cancel().catch(() => {});
        break;
      }
    }
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: joinChunks(chunks, size), truncated };
}

/** Retry-After as ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A short, stable reason for the attempts log. */
export function describeFailure(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'ABORT_ERR' || e?.name === 'AbortError') return 'timeout';
  const code = e?.code ?? e?.cause?.code;
  if (code === 'URL_NOT_ALLOWED') return `url_not_allowed: ${e.message}`;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `dns: ${code}`;
  if (typeof code === 'string' && /CERT|SSL|TLS|SELF_SIGNED/.test(code)) return `tls: ${code}`;
  return code ? String(code) : (e?.message ?? String(err)).slice(0, 200);
}
