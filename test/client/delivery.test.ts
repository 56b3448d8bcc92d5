// Receiving push deliveries: verifyDelivery against signatures the `standardwebhooks` package
// makes, and the answers of deliveryHandler and the Lambda function URL helper. The server's
// dispatcher is not on this branch: these are wire-level tests of the receiving side only.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  deliveryHandler,
  DeliveryVerificationError,
  lambdaDeliveryHandler,
  verifyDelivery,
  type Delivery,
} from '../../client/src/index.js';
import type { DeliveryBody } from '../../client/src/wire.js';
import { functionUrlEvent } from '../../support/lambda.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

const body: DeliveryBody<{ order: number }> = {
  subscription: 'sub-1',
  queue: 'orders',
  partition: 'eu',
  partitionId: '7',
  consumerGroup: 'mailer',
  attempt: 1,
  messages: [
    {
      offset: 4,
      transactionId: 'o-4',
      messageId: '0193a1b2-0000-7000-8000-000000000004',
      createdAt: '2026-12-02T01:00:00.000Z',
      traceId: null,
      producerSub: 'shop',
      data: { order: 4 },
    },
    // A number JSON.stringify would not write back the same way: the signature is over the raw bytes.
    {
      offset: 5,
      transactionId: 'o-5',
      messageId: '0193a1b2-0000-7000-8000-000000000005',
      createdAt: '2026-12-02T01:00:01.000Z',
      traceId: null,
      producerSub: 'shop',
      data: { order: 5 },
    },
  ],
};
const raw = JSON.stringify(body).replace('"order":5}', '"order":5.0}');

/** The request the dispatcher sends, signed by standardwebhooks with each of `secrets`. */
function signed(secrets: string[], { id = 'msg_batch1', at = new Date(), text = raw } = {}) {
  const signature = secrets.map((s) => new Webhook(s).sign(id, at, text)).join(' ');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

const rejection = async (p: Promise<unknown>) => {
  const err = await p.catch((e) => e);
  expect(err).toBeInstanceOf(DeliveryVerificationError);
  return (err as DeliveryVerificationError).code;
};

describe('verifyDelivery', () => {
  it('accepts what standardwebhooks signs, from headers and the raw body, and returns the typed body with its webhook-id', async () => {
    const s = secret();
    const headers = signed([s]);
    // standardwebhooks itself agrees the request is valid.
    expect(new Webhook(s).verify(raw, headers)).toMatchObject({ queue: 'orders' });
    const delivery: Delivery<{ order: number }> = await verifyDelivery({ headers, body: raw }, s);
    expect(delivery).toMatchObject({ webhookId: 'msg_batch1', subscription: 'sub-1', partitionId: '7', attempt: 1 });
    expect(delivery.messages.map((m) => m.data.order)).toEqual([4, 5]);
    // As bytes, as a Headers object, and as a whole Request.
    expect(await verifyDelivery({ headers: new Headers(headers), body: new TextEncoder().encode(raw) }, s)).toMatchObject({
      queue: 'orders',
    });
    const request = new Request('https://receiver.example/', { method: 'POST', headers, body: raw });
    expect(await verifyDelivery(request, s)).toMatchObject({ queue: 'orders' });
  });

  it('accepts any of several secrets, and both signatures during a rotation', async () => {
    const [old, fresh, other] = [secret(), secret(), secret()];
    await verifyDelivery({ headers: signed([fresh]), body: raw }, [old, fresh]);
    await verifyDelivery({ headers: signed([old, fresh]), body: raw }, fresh);
    await verifyDelivery({ headers: signed([old, fresh]), body: raw }, old);
    expect(await rejection(verifyDelivery({ headers: signed([old, fresh]), body: raw }, other))).toBe('invalid_signature');
  });

  it('refuses a changed body, a wrong secret, a timestamp more than five minutes off and missing headers', async () => {
    const s = secret();
    expect(await rejection(verifyDelivery({ headers: signed([s]), body: raw.replace('5.0', '5') }, s))).toBe('invalid_signature');
    expect(await rejection(verifyDelivery({ headers: signed([s]), body: raw }, secret()))).toBe('invalid_signature');
    const old = new Date(Date.now() - 6 * 60_000);
    expect(await rejection(verifyDelivery({ headers: signed([s], { at: old }), body: raw }, s))).toBe('timestamp_out_of_range');
    const future = new Date(Date.now() + 6 * 60_000);
    expect(await rejection(verifyDelivery({ headers: signed([s], { at: future }), body: raw }, s))).toBe('timestamp_out_of_range');
    // Four minutes old is fine.
    await verifyDelivery({ headers: signed([s], { at: new Date(Date.now() - 4 * 60_000) }), body: raw }, s);
    const { 'webhook-signature': _, ...unsigned } = signed([s]);
    expect(await rejection(verifyDelivery({ headers: unsigned, body: raw }, s))).toBe('missing_headers');
    // A signature over another id does not carry over.
    const moved = { ...signed([s]), 'webhook-id': 'msg_other' };
    expect(await rejection(verifyDelivery({ headers: moved, body: raw }, s))).toBe('invalid_signature');
  });
});

describe('deliveryHandler', () => {
  const post = (headers: Record<string, string>, text = raw) =>
    new Request('https://receiver.example/hook', { method: 'POST', headers, body: text });

  it('answers 200 with an empty body when the handler resolves, and gives it the delivery, env and ctx', async () => {
    const s = secret();
    const seen: unknown[] = [];
    const fetchHandler = deliveryHandler<{ order: number }, { SECRET: string }>(
      (env) => env.SECRET,
      async (delivery, env, ctx) => {
        seen.push(delivery.messages.length, env.SECRET === s, ctx);
      },
    );
    const res = await fetchHandler(post(signed([s])), { SECRET: s }, 'ctx');
    expect([res.status, await res.text()]).toEqual([200, '']);
    expect(seen).toEqual([2, true, 'ctx']);
  });

  it("answers 200 with the handler's acks as JSON, for per-message outcomes", async () => {
    const s = secret();
    const fetchHandler = deliveryHandler(s, (d) => ({ acks: [{ offset: d.messages[1]!.offset, status: 'retry' as const }] }));
    const res = await fetchHandler(post(signed([s])), {}, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ acks: [{ offset: 5, status: 'retry' }] });
  });

  it('answers 401 to a bad signature without calling the handler, 500 when the handler throws, 405 to a GET', async () => {
    const s = secret();
    let calls = 0;
    const fetchHandler = deliveryHandler(s, () => {
      calls++;
      throw new Error('mailer down');
    });
    const bad = await fetchHandler(post(signed([secret()])), {}, {});
    expect([bad.status, await bad.json()]).toEqual([
      401,
      { error: 'no webhook-signature matches the given secrets', code: 'invalid_signature' },
    ]);
    expect(calls).toBe(0);
    const failed = await fetchHandler(post(signed([s])), {}, {});
    expect([failed.status, await failed.json()]).toEqual([500, { error: 'mailer down', code: 'handler_failed' }]);
    expect((await fetchHandler(new Request('https://receiver.example/hook'), {}, {})).status).toBe(405);
  });
});

describe('lambdaDeliveryHandler', () => {
  it('verifies a function URL event, base64 body or not, and answers as deliveryHandler does', async () => {
    const s = secret();
    const handler = lambdaDeliveryHandler<{ order: number }>(
      () => [s],
      (d) => (d.messages[0]!.data.order === 4 ? { acks: [{ transactionId: 'o-5', status: 'failed', error: 'no' }] } : undefined),
    );
    for (const base64 of [false, true]) {
      const event = functionUrlEvent('POST', '/', { body: raw, base64, headers: signed([s]) });
      const result = await handler(event);
      expect(result).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"acks":[{"transactionId":"o-5","status":"failed","error":"no"}]}',
      });
    }
    const forged = await handler(functionUrlEvent('POST', '/', { body: raw, headers: signed([secret()]) }));
    expect(forged.statusCode).toBe(401);
    const thrower = lambdaDeliveryHandler(s, () => Promise.reject(new Error('boom')));
    expect(await thrower(functionUrlEvent('POST', '/', { body: raw, headers: signed([s]) }))).toMatchObject({
      statusCode: 500,
      body: '{"error":"boom","code":"handler_failed"}',
    });
    expect(await thrower(functionUrlEvent('GET', '/'))).toMatchObject({ statusCode: 405 });
  });
});

describe('the delivery examples', () => {
  it('examples/delivery-worker.mjs dead-letters a message without an email and completes the rest', async () => {
    const { root } = await import('../support/server.js');
    const worker = (await import(/* @vite-ignore */ `${root}examples/delivery-worker.mjs`)).default;
    const s = secret();
    const text = JSON.stringify({
      ...body,
      messages: [
        { ...body.messages[0], data: { email: 'a@example.com' } },
        { ...body.messages[1], data: {} },
      ],
    });
    const res: Response = await worker.fetch(
      new Request('https://w.example/', { method: 'POST', headers: signed([s], { text }), body: text }),
      { QUEEN_DELIVERY_SECRET: s },
      {},
    );
    expect([res.status, await res.json()]).toEqual([200, { acks: [{ offset: 5, status: 'dlq', error: 'no email address' }] }]);
  });

  it('examples/delivery-lambda.mjs accepts either secret of a rotation from QUEEN_DELIVERY_SECRET', async () => {
    const { root } = await import('../support/server.js');
    const { handler } = await import(/* @vite-ignore */ `${root}examples/delivery-lambda.mjs`);
    const [old, fresh] = [secret(), secret()];
    const before = process.env.QUEEN_DELIVERY_SECRET;
    process.env.QUEEN_DELIVERY_SECRET = `${old},${fresh}`;
    try {
      for (const s of [old, fresh])
        expect((await handler(functionUrlEvent('POST', '/', { body: raw, headers: signed([s]), base64: true }))).statusCode).toBe(200);
      expect((await handler(functionUrlEvent('POST', '/', { body: raw, headers: signed([secret()]) }))).statusCode).toBe(401);
    } finally {
      if (before === undefined) delete process.env.QUEEN_DELIVERY_SECRET;
      else process.env.QUEEN_DELIVERY_SECRET = before;
    }
  });
});
