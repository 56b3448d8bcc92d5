// One request with the client's retry policy: 503, 429 and network errors are retried with
// jittered exponential back-off (at least Retry-After) up to `retries` times.
import { QueenError } from './errors.js';
import type { ErrorBody } from './wire.js';

export interface Transport {
  url: string;
  token?: string;
  fetch: typeof fetch;
  timeoutMs: number;
  retries: number;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Extra time the server may hold the request (a long-poll), ms. */
  holdMs?: number;
  /** False: a request whose answer was lost must not be sent again (it may have acted). */
  resend?: boolean;
}

/** Full jitter: a random wait below min(cap, base·2^attempt). */
export const backoff = (attempt: number, baseMs = 200, capMs = 10_000) => Math.random() * Math.min(capMs, baseMs * 2 ** attempt);

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    };
    const abort = () => (done(), reject(signal!.reason));
    const timer = setTimeout(() => (done(), resolve()), ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** The parsed JSON answer; null for a 204. Throws QueenError for anything but 2xx. */
export async function request<T>(
  t: Transport,
  method: string,
  path: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<T | null> {
  const headers: Record<string, string> = {};
  if (t.token) headers.authorization = `Bearer ${t.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  for (let attempt = 0; ; attempt++) {
    let res: Answer;
    try {
      res = await send(t, path, init, options);
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      const failure = err instanceof QueenError ? err : new QueenError(0, 'network_error', `${method} ${path}: ${(err as Error).message}`);
      if (attempt >= t.retries || options.resend === false) throw failure;
      await sleep(backoff(attempt), options.signal);
      continue;
    }
    const { status, text } = res;
    if (status === 204) return null;
    if (status >= 200 && status < 300) return (text ? JSON.parse(text) : null) as T;
    const retryAfter = parseRetryAfter(res.retryAfter);
    if ((status === 503 || status === 429) && attempt < t.retries) {
      await sleep(Math.max((retryAfter ?? 0) * 1000 * (1 + Math.random() / 5), backoff(attempt)), options.signal);
      continue;
    }
    throw errorFrom(status, text, retryAfter, `${method} ${path}`);
  }
}

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
}

async function send(t: Transport, path: string, init: RequestInit, options: RequestOptions): Promise<Answer> {
  const controller = new AbortController();
  const timeoutMs = t.timeoutMs + (options.holdMs ?? 0);
  let timedOut = false;
  const timer = setTimeout(() => ((timedOut = true), controller.abort()), timeoutMs);
  const abort = () => controller.abort(options.signal!.reason);
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    // The body is read inside the timer too: a connection dropped mid-answer is a network error.
    const res = await t.fetch(t.url + path, { ...init, signal: controller.signal });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
  } catch (err) {
    if (timedOut) throw new QueenError(0, 'timeout', `${init.method} ${path}: no answer within ${timeoutMs} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', abort);
  }
}

function errorFrom(status: number, text: string, retryAfter: number | null, what: string): QueenError {
  let body: Partial<ErrorBody> | undefined;
  try {
    body = JSON.parse(text) as Partial<ErrorBody>;
  } catch {
    body = undefined;
  }
  const code = typeof body?.code === 'string' ? body.code : `http_${status}`;
  const message = typeof body?.error === 'string' ? body.error : `${what} answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
  return new QueenError(status, code, message, retryAfter, body);
}

function parseRetryAfter(value: string | null): number | null {
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
