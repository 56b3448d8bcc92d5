// The one HTTP client of the tests and the benchmarks: a request is a method, a path and a body,
// sent over the network or to a Hono app in this process, and answered as status, text and headers.
// Over the network it is node:http with a keep-alive agent, not fetch: undici costs more CPU per
// request, and that CPU would compete with the server on a 2-core machine.
import http from 'node:http';

/** An HTTP answer; status 0 is none at all (from `send`), with `error` saying why (ECONNREFUSED, a reset). */
export interface Answer {
  status: number;
  text: string;
  headers: Headers;
  error?: string;
}

/** Sends one request; `body` goes as it is, with content-type application/json. */
export type Send = (method: string, path: string, body?: string, headers?: Record<string, string>) => Promise<Answer>;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

type Base = URL | string;

/** Node's header object as a Headers (a repeated header once per value). */
function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  return headers;
}

function exchange(
  base: Base,
  method: string,
  path: string,
  body?: string,
  extra: Record<string, string> = {},
  timeoutMs?: number,
): Promise<Answer> {
  const url = typeof base === 'string' ? new URL(base) : base;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...extra };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: url.hostname, port: url.port, path, method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        let headers: Headers | undefined;
        // Built on first read: a benchmark's loop reads the status and the text only.
        const raw = res.headers;
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString(),
          get headers() {
            return (headers ??= toHeaders(raw));
          },
        });
      });
      res.on('error', reject);
    });
    if (timeoutMs !== undefined) {
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    }
    req.on('error', reject);
    req.end(body);
  });
}

/** One request over the network; rejects when there is no answer. */
export function request(base: Base, method: string, path: string, body?: string, headers?: Record<string, string>): Promise<Answer> {
  return exchange(base, method, path, body, headers);
}

/** Like request, but anything other than `expect` is an error carrying the body. */
export async function call(base: Base, method: string, path: string, body?: string, expect = [200, 201, 204]): Promise<Answer> {
  const reply = await request(base, method, path, body);
  if (!expect.includes(reply.status)) throw new Error(`${method} ${path} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  return reply;
}

/** Like request, but never rejects: no answer within 30 s, or none at all, is status 0 with the error's code. */
export async function send(base: Base, method: string, path: string, body?: string): Promise<Answer> {
  try {
    return await exchange(base, method, path, body, {}, 30_000);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    return { status: 0, text: '', headers: new Headers(), error: code ?? message ?? String(err) };
  }
}

/** The same requests to a Hono app in this process (`app.request`), no socket in between. */
export function inProcess(app: { request(path: string, init: RequestInit): Response | Promise<Response> }): Send {
  return async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } };
    if (body !== undefined) init.body = body;
    const res = await app.request(path, init);
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
}

/**
 * JSON over `send`: a non-string body is sent as JSON, and the answer is parsed (null when empty,
 * or text such as Prometheus'). `headers` go with every request.
 */
export function jsonCall(send: Send, headers: Record<string, string> = {}) {
  return async <T = any>(method: string, path: string, body?: unknown, more: Record<string, string> = {}) => {
    const text = body === undefined || typeof body === 'string' ? body : JSON.stringify(body);
    const res = await send(method, path, text, { ...headers, ...more });
    const json = res.text !== '' && !(res.headers.get('content-type') ?? '').startsWith('text/plain');
    return { status: res.status, body: (json ? JSON.parse(res.text) : null) as T, text: res.text, headers: res.headers };
  };
}
