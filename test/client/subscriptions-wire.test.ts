// WIRE-LEVEL ONLY, against a recorded-request fake, not the broker: the subscription routes and
// DLQ redrive are served by the push-delivery work, which is not on this branch. These tests hold
// what the client sends (method, path, body, token) and how it reads the documented answers.
import { describe, expect, it } from 'vitest';
import { Queen, QueenError } from '../../client/src/index.js';
import type { Subscription, SubscriptionCreated } from '../../client/src/wire.js';

interface Recorded {
  method: string;
  path: string;
  body: unknown;
  authorization: string | null;
}

/** A fetch that records each request and answers from `answer`. */
function recorder(answer: (r: Recorded) => Response) {
  const requests: Recorded[] = [];
  const fake: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const r = { method: init?.method ?? 'GET', path: url.pathname + url.search, body: init?.body ? JSON.parse(String(init.body)) : undefined, authorization: headers.get('authorization') };
    requests.push(r);
    return answer(r);
  };
  return { requests, queen: new Queen({ url: 'https://queen.example/', token: 'tok', fetch: fake }) };
}

const subscription: Subscription = {
  id: 'sub_1',
  queue: 'orders',
  name: 'mailer',
  consumerGroup: 'mailer',
  url: 'https://mailer.example/hook',
  state: 'active',
  options: { batchSize: 10, maxInFlight: 16, timeoutMs: 15000, rateLimit: 0, retryBaseMs: 1000, retryMaxMs: 300000, subscriptionMode: 'all', headers: {}, disableAfterMs: 86400000 },
  createdAt: '2026-12-02T01:00:00.000Z',
};

describe('admin.subscriptions and admin.dlq.redrive on the wire (recorded-request fake)', () => {
  it('sends each call to its route with the token and reads the answer', async () => {
    const { requests, queen } = recorder((r) => {
      if (r.method === 'POST' && r.path === '/api/v1/subscriptions') return Response.json({ ...subscription, secret: 'whsec_abc' }, { status: 201 });
      if (r.path.startsWith('/api/v1/subscriptions?')) return Response.json({ subscriptions: [subscription] });
      if (r.path.endsWith('/rotate-secret')) return Response.json({ secret: 'whsec_new' }, { status: 201 });
      if (r.path.includes('/attempts')) return Response.json({ attempts: [{ status: 200 }] });
      if (r.path === '/api/v1/dlq/redrive') return Response.json({ redriven: 3 });
      return Response.json(subscription);
    });
    const created: SubscriptionCreated = await queen.admin.subscriptions.create({ queue: 'orders', name: 'mailer', url: 'https://mailer.example/hook', options: { batchSize: 50 } });
    expect(created.secret).toBe('whsec_abc');
    expect(await queen.admin.subscriptions.list({ queue: 'orders' })).toEqual([subscription]);
    await queen.admin.subscriptions.get('sub_1');
    await queen.admin.subscriptions.update('sub_1', { state: 'paused' });
    await queen.admin.subscriptions.delete('sub_1');
    expect((await queen.admin.subscriptions.rotateSecret('sub_1')).secret).toBe('whsec_new');
    expect(await queen.admin.subscriptions.attempts('sub_1', { limit: 5 })).toEqual([{ status: 200 }]);
    expect(await queen.admin.dlq.redrive({ queue: 'orders', partition: 'eu', limit: 100 })).toEqual({ redriven: 3 });
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v1/subscriptions',
      'GET /api/v1/subscriptions?queue=orders',
      'GET /api/v1/subscriptions/sub_1',
      'PATCH /api/v1/subscriptions/sub_1',
      'DELETE /api/v1/subscriptions/sub_1',
      'POST /api/v1/subscriptions/sub_1/rotate-secret',
      'GET /api/v1/subscriptions/sub_1/attempts?limit=5',
      'POST /api/v1/dlq/redrive',
    ]);
    expect(requests.map((r) => r.body)).toEqual([
      { queue: 'orders', name: 'mailer', url: 'https://mailer.example/hook', options: { batchSize: 50 } },
      undefined,
      undefined,
      { state: 'paused' },
      undefined,
      undefined,
      undefined,
      { queue: 'orders', partition: 'eu', limit: 100 },
    ]);
    expect(requests.every((r) => r.authorization === 'Bearer tok')).toBe(true);
  });

  it('throws the 409 subscription_exists as a QueenError, and never resends a create whose answer was lost', async () => {
    const taken = recorder(() => Response.json({ error: 'A subscription named mailer exists on orders', code: 'subscription_exists' }, { status: 409 }));
    const err = await taken.queen.admin.subscriptions.create({ queue: 'orders', name: 'mailer', url: 'https://x.example/' }).catch((e) => e);
    expect(err).toBeInstanceOf(QueenError);
    expect(err).toMatchObject({ status: 409, code: 'subscription_exists' });
    let calls = 0;
    const lost = new Queen({
      url: 'https://queen.example',
      fetch: async () => {
        calls++;
        throw new TypeError('socket hang up');
      },
    });
    expect(await lost.admin.subscriptions.create({ queue: 'orders', name: 'm', url: 'https://x.example/' }).catch((e) => e)).toMatchObject({ code: 'network_error' });
    expect(calls).toBe(1);
  });
});
