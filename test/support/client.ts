// The whole broker as one Hono app over a test database, driven with real requests through the
// one HTTP client (support/http.ts), plus the few request shapes the suites send again and again.
import { allFunctions } from '../../functions/index.js';
import { readConfig, type Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/types.js';
import { buildApp, type AppOptions } from '../../lib/http/app.js';
import type { Principal } from '../../lib/http/context.js';
import type { AckResult, Message, PopResponse, PushResult } from '../../client/src/wire.js';
import { inProcess, jsonCall } from '../../support/http.js';

export interface ClientOptions {
  config?: Partial<Config>;
  /** Who calls, e.g. `{ tenant: 'acme' }` or `{ role: 'read-only' }`; default: an admin of the default tenant. */
  as?: Partial<Principal>;
  /** Real authentication instead (with `headers` carrying the token). */
  authenticate?: AppOptions['authenticate'];
  /** Sent with every request. */
  headers?: Record<string, string>;
  log?: AppOptions['log'];
}

// Answer shapes come from the client's wire module, so a change of shape breaks this type check.
export type Msg = Message;
export type PopBody = PopResponse;
export type Pushed = PushResult;

export type TestClient = ReturnType<typeof testClient>;

/** `db` may be useDatabase()'s accessor: the database is looked up at each request. */
export function testClient(db: Database | (() => Database), options: ClientOptions = {}) {
  const config = { ...readConfig({}, { auth: 'none' }), ...options.config };
  const principal: Principal = { tenant: 'default', sub: null, role: 'admin', ...options.as };
  const app = buildApp(allFunctions, {
    config,
    database: typeof db === 'function' ? db : () => db,
    authenticate: options.authenticate ?? (async () => principal),
    log: options.log ?? (() => {}),
  });

  /** Sends a request; a non-string body is sent as JSON. Returns status and parsed JSON (null for none, or for text such as Prometheus'). */
  const call = jsonCall(inProcess(app), options.headers);

  /** One push request of `payloads` to queue/partition (one segment); throws unless 201. */
  async function push(queue: string, partition: string, payloads: unknown[], txnIds?: string[]): Promise<Pushed[]> {
    const items = payloads.map((payload, i) => ({ queue, partition, payload, ...(txnIds ? { transactionId: txnIds[i] } : {}) }));
    const res = await call('POST', '/api/v1/push', { items });
    if (res.status !== 201) throw new Error(`push failed: ${res.status} ${res.text}`);
    return res.body;
  }

  const ackBatch = (items: object[], consumerGroup?: string) =>
    call<AckResult[]>('POST', '/api/v1/ack/batch', { consumerGroup, acknowledgments: items });

  return {
    app,
    config,
    call,
    push,
    /** One segment of `count` messages {n: start + i} with transactionIds txn(start + i). */
    pushNumbered: (queue: string, partition: string, count: number, txn = (i: number) => `${partition}-${i}`, start = 0) =>
      push(
        queue,
        partition,
        Array.from({ length: count }, (_, i) => ({ n: start + i })),
        Array.from({ length: count }, (_, i) => txn(start + i)),
      ),
    /** One push request (one segment) per entry, each entry a list of payloads. */
    async pushSegments(queue: string, segments: unknown[][], partition = 'Default') {
      for (const payloads of segments) await push(queue, partition, payloads);
    },
    configure: (queue: string, opts: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
      call('POST', '/api/v1/configure', { queue, options: opts, ...extra }),
    /** GET /api/v1/pop/<path>, e.g. `queue/orders?batch=10`. */
    pop: (path: string) => call<PopBody>('GET', `/api/v1/pop/${path}`),
    popQueue: (queue: string, query: Record<string, string | number | boolean> = {}, partition?: string) => {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
      const path = `queue/${encodeURIComponent(queue)}${partition ? `/partition/${encodeURIComponent(partition)}` : ''}`;
      return call<PopBody>('GET', `/api/v1/pop/${qs ? `${path}?${qs}` : path}`);
    },
    ack: (body: Record<string, unknown>) => call<AckResult[]>('POST', '/api/v1/ack', body),
    ackBatch,
    /** Acks every message of a pop with one status. */
    ackAll: (body: PopBody, status = 'completed', group?: string) =>
      ackBatch(
        body.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status })),
        group,
      ),
    describe: (queue: string) => call('GET', `/api/v1/resources/queues/${encodeURIComponent(queue)}`),
    seek: (group: string, queue: string, body: unknown) =>
      call('POST', `/api/v1/consumer-groups/${encodeURIComponent(group)}/queues/${encodeURIComponent(queue)}/seek`, body),
  };
}

/**
 * Every key of a wire type, sorted: `wireKeys<PushResult>()([...])` fails to compile unless the
 * list names exactly the type's keys, so a test comparing it with an answer holds the type too.
 */
export const wireKeys =
  <T>() =>
  <const K extends readonly (keyof T & string)[]>(keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : never)): string[] =>
    [...keys].sort();

/** The offsets a pop delivered; none for a 204. */
export const offsets = (body: PopBody | null) => (body?.messages ?? []).map((m) => m.offset);
