// The files a user writes in the empty project that installs the packed client.

/** Node 20: `node app.mjs <url> <queue>` prints what it did as JSON. */
export const NODE_APP = `import { Queen, QueenError } from 'queen-serverless-client';

const [url, queue] = process.argv.slice(2);
const queen = new Queen({ url });
const pushed = await queen.push(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
const batch = await queen.pop(queue);
await queen.ack(batch);
const consumed = [];
const stop = new AbortController();
await queen.consume(queue, (m) => {
  consumed.push(m.data);
  if (consumed.length === 2) stop.abort();
}, { signal: stop.signal, waitMs: 2000 });
await queen.push(queue + '-in', [{ data: 'x' }]);
const incoming = await queen.pop(queue + '-in');
const tx = await queen.transaction().ack(incoming).push(queue + '-out', [{ data: 'y' }]).commit();
let error;
try {
  await queen.push('no/slashes', [{ data: 0 }]);
} catch (err) {
  error = err instanceof QueenError ? err.code : String(err);
}
console.log(JSON.stringify({
  pushed: pushed.map((r) => r.status),
  popped: batch.messages.map((m) => m.data),
  consumed,
  moved: tx.success,
  empty: (await queen.pop(queue)) === null,
  error,
}));
`;

/** A strict TypeScript user of every exported surface; the @ts-expect-error lines must stay errors. */
export const USER_TS = `import {
  Queen, QueenError, AckError, verifyDelivery, deliveryHandler, lambdaDeliveryHandler, DeliveryVerificationError,
  type Message, type PopResponse, type PushResult, type AckResult, type Delivery, type DeliveryAnswer, type ConsumeOptions,
} from 'queen-serverless-client';

interface Order { id: number; total: number }

export async function main(signal: AbortSignal): Promise<void> {
  const queen = new Queen({ url: 'http://localhost:6632', token: 'jwt', timeoutMs: 10_000, retries: 5, fetch: globalThis.fetch });
  const pushed: PushResult[] = await queen.push<Order>('orders', [{ data: { id: 1, total: 9 }, partition: 'eu', transactionId: 'o-1' }]);
  const status: 'queued' | 'duplicate' = pushed[0]!.status;
  const batch: PopResponse<Order> | null = await queen.pop<Order>('orders', { group: 'billing', batch: 10, wait: true, timeoutMs: 20_000 });
  if (batch) {
    const first: Message<Order> = batch.messages[0]!;
    const total: number = first.data.total;
    const results: AckResult[] = await queen.ack(batch, 'completed');
    await queen.ack(batch.messages.slice(1), 'failed', { error: 'card declined' + total });
    // @ts-expect-error: not an ack status
    await queen.ack(first, 'done');
    void results;
  }
  const options: ConsumeOptions = { group: 'billing', batch: 50, concurrency: 4, signal, onError: (e) => console.error(e) };
  await queen.consume<Order>('orders', async (m) => {
    const id: number = m.data.id;
    // @ts-expect-error: data is an Order
    const name: string = m.data.name;
    void id, name;
  }, options);
  const tx = await queen.transaction().push('shipped', [{ data: { id: 1 } }]).commit();
  const ok: boolean = tx.success;
  await queen.admin.configure({ queue: 'orders', options: { leaseTime: 120, retryLimit: 5 } });
  // @ts-expect-error: unknown option
  await queen.admin.configure({ queue: 'orders', options: { leaseSeconds: 120 } });
  const dead = await queen.admin.dlq.list<Order>({ queue: 'orders', limit: 10 });
  for (const d of dead.messages) await queen.admin.dlq.retry(d);
  await queen.admin.dlq.redrive({ queue: 'orders' });
  const sub = await queen.admin.subscriptions.create({ queue: 'orders', name: 'mailer', url: 'https://mailer.example/hook', options: { batchSize: 20 } });
  const secret: string = sub.secret;
  await queen.admin.subscriptions.update(sub.id, { state: 'paused' });
  await queen.admin.subscriptions.rotateSecret(sub.id);
  await queen.admin.subscriptions.delete(sub.id);
  void status, ok, secret;
  try {
    await queen.push('x', [{ data: null }]);
  } catch (err) {
    if (err instanceof AckError) console.log(err.refused.map((r) => r.error));
    else if (err instanceof QueenError) console.log(err.status, err.code, err.message, err.retryAfter);
  }
}

export async function receive(request: Request): Promise<number> {
  try {
    const delivery: Delivery<Order> = await verifyDelivery<Order>(request, ['whsec_old', 'whsec_new']);
    return delivery.messages.reduce((sum, m) => sum + m.data.total, 0) + delivery.attempt;
  } catch (err) {
    if (err instanceof DeliveryVerificationError) return err.code === 'invalid_signature' ? -1 : -2;
    throw err;
  }
}

interface Env { QUEEN_DELIVERY_SECRET: string }

export default {
  fetch: deliveryHandler<Order, Env>((env) => env.QUEEN_DELIVERY_SECRET, async (delivery): Promise<DeliveryAnswer> => ({
    acks: delivery.messages.filter((m) => m.data.total < 0).map((m) => ({ offset: m.offset, status: 'dlq' as const, error: 'negative total' })),
  })),
};

export const handler = lambdaDeliveryHandler<Order>(() => 'whsec_x', async (delivery) => {
  console.log(delivery.webhookId, delivery.messages.length);
});
`;

/** A Worker: /demo pushes, pops and acks through the client; /hook receives signed deliveries. */
export const WORKER = `import { Queen, deliveryHandler } from 'queen-serverless-client';

const hook = deliveryHandler((env) => env.DELIVERY_SECRET, (delivery) => ({
  acks: delivery.messages.filter((m) => typeof m.data.order !== 'number').map((m) => ({ offset: m.offset, status: 'dlq', error: 'order is not a number' })),
}));

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === '/health') return new Response('ok');
    if (url.pathname === '/hook') return hook(request, env, ctx);
    const queen = new Queen({ url: env.QUEEN_URL });
    const queue = url.searchParams.get('queue');
    const pushed = await queen.push(queue, [{ data: { order: 1 } }, { data: { order: 2 } }, { data: { order: 3 } }]);
    const batch = await queen.pop(queue, { batch: 10 });
    const acked = await queen.ack(batch);
    return Response.json({
      pushed: pushed.map((r) => r.status),
      popped: batch.messages.map((m) => m.data),
      acked: acked.every((r) => r.success),
      empty: (await queen.pop(queue)) === null,
    });
  },
};
`;
