// The client's subscription and redrive methods against `npm start` with its real dispatcher, and
// `deliveryHandler` as the receiving function: what a user of push delivery writes, end to end.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryHandler, QueenError, type Delivery, type DeliveryAnswer } from '../../client/src/index.js';
import { waitFor } from '../support/server.js';
import { useBroker } from './support.js';

interface Endpoint {
  url: string;
  deliveries: Delivery<{ n: number }>[];
  /** Raw requests, to check them with the standardwebhooks package too. */
  raw: { headers: Record<string, string>; body: string }[];
  answer: (d: Delivery<{ n: number }>) => DeliveryAnswer | void;
  secrets: string[];
  close(): Promise<void>;
}

/** A node:http server in front of a fetch-style handler made by deliveryHandler, as a Worker would run it. */
async function endpoint(): Promise<Endpoint> {
  const e = { deliveries: [], raw: [], answer: () => undefined, secrets: [] } as unknown as Endpoint;
  const handle = deliveryHandler<{ n: number }>(
    () => e.secrets,
    (d) => {
      e.deliveries.push(d);
      return e.answer(d);
    },
  );
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    e.raw.push({ headers, body: body.toString('utf8') });
    const answer = await handle(new Request(`http://endpoint${req.url}`, { method: req.method, headers, body }), {}, {});
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  e.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  e.close = () => new Promise((resolve) => server.close(() => resolve()));
  return e;
}

describe('queen-serverless-client with push delivery, behind the real dispatcher', () => {
  const used = useBroker({ QUEEN_DELIVERY_ALLOW_PRIVATE: '1' });
  let hook: Endpoint;
  beforeAll(async () => {
    hook = await endpoint();
  });
  afterAll(() => hook?.close());

  it('creates a subscription whose deliveries deliveryHandler verifies, and manages it through admin.subscriptions', async () => {
    const { queen } = used;
    const created = await queen.admin.subscriptions.create({
      queue: 'client-hooked',
      name: 'mailer',
      url: hook.url,
      options: { batchSize: 5, headers: { 'x-team': 'mail' } },
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.options).toMatchObject({ batchSize: 5, headers: ['x-team'] });
    hook.secrets = [created.secret];

    await queen.push(
      'client-hooked',
      [1, 2, 3].map((n) => ({ data: { n }, partition: 'p1' })),
    );
    await waitFor('three messages delivered', () => hook.deliveries.flatMap((d) => d.messages).length >= 3, 20_000);
    const messages = hook.deliveries.flatMap((d) => d.messages);
    expect(messages.map((m) => [m.offset, m.data.n])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    expect(hook.deliveries[0]).toMatchObject({
      subscription: created.id,
      queue: 'client-hooked',
      partition: 'p1',
      consumerGroup: 'mailer',
      attempt: 1,
    });
    expect(hook.raw[0]!.headers['x-team']).toBe('mail');
    // The same request checks out with the Standard Webhooks library, not only with ours.
    expect(new Webhook(created.secret).verify(hook.raw[0]!.body, hook.raw[0]!.headers)).toMatchObject({ subscription: created.id });

    await waitFor('the batch acked', async () => (await queen.admin.subscriptions.get(created.id)).delivered === 3, 20_000);
    const detail = await queen.admin.subscriptions.get(created.id);
    expect(detail).toMatchObject({ state: 'active', lag: 0, inFlight: 0, failedAttempts: 0, partitions: [{ partition: 'p1', lag: 0 }] });
    expect(detail.attempts[0]).toMatchObject({ outcome: 'delivered', status: 200, fromOffset: 0, toOffset: 2 });
    expect((await queen.admin.subscriptions.list({ queue: 'client-hooked' })).map((s) => s.name)).toEqual(['mailer']);
    expect((await queen.admin.subscriptions.attempts(created.id, { limit: 1 }))[0]!.webhookId).toBe(hook.deliveries[0]!.webhookId);

    // Rotation: for 24 h both secrets sign, so a receiver on the new one (deliveryHandler here) and
    // one still on the old one (the library below) both accept the next delivery.
    const rotated = await queen.admin.subscriptions.rotateSecret(created.id);
    hook.secrets = [rotated.secret];
    await queen.push('client-hooked', [{ data: { n: 4 }, partition: 'p1' }]);
    await waitFor('the message after the rotation', () => hook.deliveries.flatMap((d) => d.messages).some((m) => m.data.n === 4), 20_000);
    expect(new Webhook(created.secret).verify(hook.raw.at(-1)!.body, hook.raw.at(-1)!.headers)).toBeTruthy();

    const paused = await queen.admin.subscriptions.update(created.id, { state: 'paused' });
    expect(paused).toMatchObject({ state: 'paused', pausedReason: 'paused_by_user' });
    expect(await queen.admin.subscriptions.delete(created.id)).toMatchObject({ deleted: true });
    await expect(queen.admin.subscriptions.get(created.id)).rejects.toMatchObject({ status: 404, code: 'subscription_not_found' });
  });

  it('turns the acks the handler returns into per-message outcomes, and redrive brings the dead letter back', async () => {
    const { queen } = used;
    await queen.admin.configure({ queue: 'client-acks', options: { retryLimit: 0 } });
    const created = await queen.admin.subscriptions.create({ queue: 'client-acks', name: 'billing', url: hook.url });
    hook.secrets = [created.secret];
    let refused = 0;
    hook.answer = (d) => {
      const bad = d.messages.find((m) => m.data.n === 2 && refused++ === 0);
      return bad ? { acks: [{ offset: bad.offset, status: 'dlq', error: 'card declined' }] } : undefined;
    };
    await queen.push(
      'client-acks',
      [1, 2, 3].map((n) => ({ data: { n }, partition: 'eu' })),
    );
    await waitFor(
      'two delivered and one dead-lettered',
      async () => {
        const s = await queen.admin.subscriptions.get(created.id);
        return s.delivered === 2 && s.deadLettered === 1;
      },
      20_000,
    );
    const dead = await queen.admin.dlq.list<{ n: number }>({ queue: 'client-acks', consumerGroup: 'billing' });
    expect(dead.messages.map((m) => [m.data, m.errorMessage])).toEqual([[{ n: 2 }, 'card declined']]);

    const redriven = await queen.admin.dlq.redrive({ queue: 'client-acks', consumerGroup: 'billing' });
    expect(redriven).toMatchObject({ success: true, queue: 'client-acks', redriven: 1, remaining: 0 });
    // Re-pushed under a fresh transactionId: a new message the subscription delivers again.
    await waitFor('the redriven message delivered', async () => (await queen.admin.subscriptions.get(created.id)).delivered === 3, 20_000);
    expect(hook.deliveries.at(-1)!.messages.map((m) => m.data)).toEqual([{ n: 2 }]);
    hook.answer = () => undefined;
  });

  it('answers a refused subscription with a QueenError naming the code', async () => {
    const err = await used.queen.admin.subscriptions
      .create({ queue: 'client-hooked', name: 'x', url: hook.url, options: { batchSize: 0 } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueenError);
    expect(err).toMatchObject({ status: 400 });
  });
});
