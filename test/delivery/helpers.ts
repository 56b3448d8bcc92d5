// The dispatcher suites' fixtures: subscriptions made straight in SQL, pushes through the broker
// verb (no trigger runs a dispatcher behind the test's back), and real HTTP receivers on 127.0.0.1
// that record what arrived and check each signature with the standardwebhooks package.
import type { DeliveryBody as WireDeliveryBody } from '../../client/src/wire.js';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { v7 as uuidv7 } from 'uuid';
import { mintWebhookSecret, sealText } from '../../lib/broker/delivery/secrets.js';
import { pushItems } from '../../lib/broker/push.js';
import { readConfig, type Config } from '../../lib/config.js';
import { connect } from '../../lib/db/client.js';
import type { Database, Queryable } from '../../lib/db/types.js';
import { afterAll } from 'vitest';
import type { TestDatabase } from '../support/db.js';

export const config: Config = { ...readConfig({ QUEEN_DELIVERY_ALLOW_PRIVATE: '1' }, { auth: 'none' }) };

export interface SubscriptionOptions {
  batchSize?: number;
  maxInFlight?: number;
  timeoutMs?: number;
  rateLimit?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  disableAfterMs?: number;
  headers?: Record<string, string>;
  group?: string;
}

export interface TestSubscription {
  id: string;
  secret: string;
  group: string;
}

/** A subscription row as the routes would store it (queue provisioned, the group recorded). */
export async function subscribe(
  db: Queryable,
  queue: string,
  name: string,
  url: string,
  o: SubscriptionOptions = {},
): Promise<TestSubscription> {
  const id = uuidv7();
  const secret = mintWebhookSecret();
  const group = o.group ?? name;
  const [q] = await db.query<{ id: string }>('SELECT id FROM queen.ensure_queue($1, $2)', ['default', queue]);
  await db.query(
    `INSERT INTO queen.consumer_subscriptions (queue_id, consumer_group, mode) VALUES ($1, $2, 'all') ON CONFLICT DO NOTHING`,
    [q!.id, group],
  );
  await db.query(
    `INSERT INTO queen.subscriptions (id, tenant_id, queue_id, name, consumer_group, url, batch_size, max_in_flight, timeout_ms,
       rate_limit, retry_base_ms, retry_max_ms, disable_after_ms, headers, secret)
     VALUES ($1, 'default', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      id,
      q!.id,
      name,
      group,
      url,
      o.batchSize ?? 10,
      o.maxInFlight ?? 16,
      o.timeoutMs ?? 15000,
      o.rateLimit ?? 0,
      o.retryBaseMs ?? 1000,
      o.retryMaxMs ?? 300000,
      o.disableAfterMs ?? 86400000,
      await sealText(config, JSON.stringify(o.headers ?? {})),
      await sealText(config, secret),
    ],
  );
  return { id, secret, group };
}

/** Pushes `count` messages {n} with transactionIds `<partition>-<n>` to each partition, one segment each. */
export async function pushTo(db: Queryable, queue: string, partitions: readonly string[], count: number, start = 0): Promise<void> {
  const enc = new TextEncoder();
  const items = partitions.flatMap((partition) =>
    Array.from({ length: count }, (_, i) => ({
      queue,
      partition,
      payload: enc.encode(JSON.stringify({ n: start + i })),
      transactionId: `${partition}-${start + i}`,
      traceId: null,
    })),
  );
  await pushItems(db, { tenant: 'default', sub: null, config }, items);
}

export interface Arrival {
  headers: IncomingHttpHeaders;
  raw: string;
  body: DeliveryBody;
  /** performance.now() when the request arrived and when it was answered. */
  at: number;
  answeredAt: number;
  /** The status the receiver answered with. */
  status: number;
}

/** The body the dispatcher POSTs, as the client's wire module declares it (payloads of any shape here). */
export type DeliveryBody = WireDeliveryBody<any>;

/** What a test's receiver answers: status, headers, body; or a promise of them (a slow endpoint). */
export type Reply = { status: number; headers?: Record<string, string>; body?: string };
export type Handler = (arrival: Arrival, index: number) => Reply | Promise<Reply>;

export interface Receiver {
  url: string;
  arrivals: Arrival[];
  /** Requests received and not yet answered, now. */
  open: number;
  maxOpen: number;
  /** Signature failures seen (a verified request never lands here). */
  badSignatures: string[];
  close(): Promise<void>;
}

/** A real HTTP endpoint on 127.0.0.1; `secrets` per subscription id verify each request. */
export async function receiver(secrets: Map<string, string> | string, handler: Handler = () => ({ status: 200 })): Promise<Receiver> {
  const r: Receiver = { url: '', arrivals: [], open: 0, maxOpen: 0, badSignatures: [], close: async () => {} };
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const at = performance.now();
      r.open += 1;
      r.maxOpen = Math.max(r.maxOpen, r.open);
      let body: DeliveryBody;
      try {
        const sub = String(req.headers['queen-subscription']);
        const secret = typeof secrets === 'string' ? secrets : secrets.get(sub)!;
        body = new Webhook(secret).verify(raw, req.headers as Record<string, string>) as DeliveryBody;
      } catch (err) {
        r.badSignatures.push(String(err));
        body = JSON.parse(raw) as DeliveryBody;
      }
      const arrival: Arrival = { headers: req.headers, raw, body, at, answeredAt: 0, status: 0 };
      r.arrivals.push(arrival);
      let reply: Reply;
      try {
        reply = await handler(arrival, r.arrivals.length - 1);
      } catch {
        reply = { status: 500 };
      }
      arrival.answeredAt = performance.now();
      arrival.status = reply.status;
      r.open -= 1;
      if (res.destroyed) return;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return r;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Offsets each partition received, in arrival order, per partition name. */
export function offsetsByPartition(arrivals: readonly Arrival[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const a of arrivals) {
    const list = out.get(a.body.partition) ?? [];
    list.push(...a.body.messages.map((m) => m.offset));
    out.set(a.body.partition, list);
  }
  return out;
}

export async function subscriptionRow(db: Queryable, id: string) {
  const [row] = await db.query<Record<string, any>>('SELECT * FROM queen.subscriptions WHERE id = $1', [id]);
  return row!;
}

export async function attempts(db: Queryable, id: string) {
  return db.query<Record<string, any>>('SELECT * FROM queen.subscription_attempts WHERE subscription_id = $1 ORDER BY id', [id]);
}

/** Another dispatcher's own connections on the real server; PGlite has one connection, so the same. */
export function useSecondConnection(db: () => TestDatabase): () => Promise<Database> {
  const extra: Database[] = [];
  afterAll(() => Promise.all(extra.map((d) => d.close())));
  return async () => {
    if (!db().url) return db();
    const other = await connect({ url: db().url, driver: 'pg', max: 10 });
    extra.push(other);
    return other;
  };
}
