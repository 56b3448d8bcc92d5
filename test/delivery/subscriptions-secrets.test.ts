import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import { openText, sealText } from '../../lib/broker/delivery/secrets.js';
import { signatureHeader } from '../../lib/broker/delivery/signature.js';
import { endpointHeaders, signingSecrets } from '../../lib/broker/delivery/subscriptions.js';
import { findSubscription } from '../../lib/broker/delivery/views.js';
import { readConfig } from '../../lib/config.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const KEY = 'ab'.repeat(32);
const URL_OK = 'https://93.184.216.34/hooks';
const sealed = () => testClient(db, { config: { encryptionKey: KEY } });
const keyConfig = { ...readConfig({}, { auth: 'none' }), encryptionKey: KEY };

/** Signs `body` as a delivery would with the subscription's current secrets. */
async function signedHeaders(id: string, body: string) {
  const row = (await findSubscription(db(), { tenant: 'default' }, id))!;
  const secrets = await signingSecrets(keyConfig, row);
  const ts = Math.floor(Date.now() / 1000);
  return {
    secrets,
    headers: {
      'webhook-id': 'msg_test',
      'webhook-timestamp': String(ts),
      'webhook-signature': await signatureHeader(secrets, 'msg_test', ts, body),
    },
  };
}

describe('secrets at rest', () => {
  it('stores the secret and header values sealed when QUEEN_ENCRYPTION_KEY is set, and opens them back', async () => {
    const res = await sealed().call('POST', '/api/v1/subscriptions', {
      queue: 'sealed',
      name: 's',
      url: URL_OK,
      options: { headers: { authorization: 'Bearer endpoint-token' } },
    });
    expect(res.status).toBe(201);
    const [row] = await db().query<{ secret: string; headers: string }>('SELECT secret, headers FROM queen.subscriptions WHERE id = $1', [
      res.body.id,
    ]);
    const dump = JSON.stringify(row);
    expect(dump).not.toContain(res.body.secret.slice(6));
    expect(dump).not.toContain('endpoint-token');
    expect(row!.secret.startsWith('aes-gcm:')).toBe(true);
    const full = (await findSubscription(db(), { tenant: 'default' }, res.body.id))!;
    expect(await signingSecrets(keyConfig, full)).toEqual([res.body.secret]);
    expect(await endpointHeaders(keyConfig, full.headers)).toEqual({ authorization: 'Bearer endpoint-token' });
  });

  it('keeps them as they are, marked plain, without a key; a key set later still reads them', async () => {
    const plain = await sealText({}, 'whsec_abc');
    expect(plain).toBe('plain:whsec_abc');
    expect(await openText({ encryptionKey: KEY }, plain)).toBe('whsec_abc');
  });

  it('refuses to open a sealed value without the key or with another one, rather than return garbage', async () => {
    const stored = await sealText({ encryptionKey: KEY }, 'whsec_abc');
    await expect(openText({}, stored)).rejects.toMatchObject({ code: 'encryption_key_missing' });
    await expect(openText({ encryptionKey: 'cd'.repeat(32) }, stored)).rejects.toMatchObject({ code: 'decryption_failed' });
  });

  it('shows the secret on creation only: never in a listing, a detail, a change or a deletion', async () => {
    const created = await sealed().call('POST', '/api/v1/subscriptions', { queue: 'shown-once', name: 's', url: URL_OK });
    const id = created.body.id;
    const answers = [
      await sealed().call('GET', '/api/v1/subscriptions'),
      await sealed().call('GET', `/api/v1/subscriptions/${id}`),
      await sealed().call('PATCH', `/api/v1/subscriptions/${id}`, { options: { batchSize: 2 } }),
      await sealed().call('GET', `/api/v1/subscriptions/${id}/attempts`),
    ];
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.text).not.toContain('whsec_');
      expect(a.text).not.toContain('"secret"');
    }
  });
});

describe('POST /api/v1/subscriptions/:id/rotate-secret', () => {
  it('answers 201 with a new secret; for 24 hours both sign, and a Standard Webhooks verifier accepts either', async () => {
    const created = await sealed().call('POST', '/api/v1/subscriptions', { queue: 'rotated', name: 'r', url: URL_OK });
    const old = created.body.secret as string;
    const rotated = await sealed().call('POST', `/api/v1/subscriptions/${created.body.id}/rotate-secret`);
    expect(rotated.status).toBe(201);
    const fresh = rotated.body.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    const until = Date.parse(rotated.body.previousSecretValidUntil);
    expect(until - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(until - Date.now()).toBeLessThan(24.1 * 3600_000);

    const body = JSON.stringify({ messages: [{ offset: 0, data: { n: 1 } }] });
    const { secrets, headers } = await signedHeaders(created.body.id, body);
    expect(secrets).toEqual([fresh, old]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(fresh).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(old).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(body, headers)).toThrow();
  });

  it('sends a real delivery that a Standard Webhooks receiver accepts with either secret, with the extra headers opened', async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          received.push({ headers: req.headers, body });
          res.end();
        });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const local = testClient(db, { config: { encryptionKey: KEY, deliveryAllowPrivate: true } });
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const created = await local.call('POST', '/api/v1/subscriptions', {
        queue: 'wire',
        name: 'w',
        url,
        options: { headers: { authorization: 'Bearer endpoint-token' } },
      });
      const rotated = await local.call('POST', `/api/v1/subscriptions/${created.body.id}/rotate-secret`);
      await local.pushNumbered('wire', 'p0', 2);
      // Only this queue's subscriptions: the others point at public addresses no test may reach.
      const [queue] = await db().query<{ id: string }>(`SELECT id FROM queen.queues WHERE name = 'wire'`);
      await runDelivery(db(), local.config, { deadline: Date.now() + 2000, queueIds: [Number(queue!.id)] });
      expect(received).toHaveLength(1);
      const headers = Object.fromEntries(Object.entries(received[0]!.headers).map(([k, x]) => [k, String(x)]));
      const body = received[0]!.body;
      for (const secret of [created.body.secret, rotated.body.secret]) {
        expect(new Webhook(secret).verify(body, headers)).toMatchObject({
          subscription: created.body.id,
          messages: [{ data: { n: 0 } }, { data: { n: 1 } }],
        });
      }
      expect(headers.authorization).toBe('Bearer endpoint-token');
      expect((await local.call('GET', `/api/v1/subscriptions/${created.body.id}`)).body).toMatchObject({
        delivered: 2,
        lag: 0,
        lastAttempt: { outcome: 'delivered', status: 200 },
      });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('stops signing with the previous secret once its 24 hours are over', async () => {
    const created = await sealed().call('POST', '/api/v1/subscriptions', { queue: 'rotated-late', name: 'r', url: URL_OK });
    const fresh = (await sealed().call('POST', `/api/v1/subscriptions/${created.body.id}/rotate-secret`)).body.secret;
    await db().query(`UPDATE queen.subscriptions SET previous_secret_until = now() - interval '1 second' WHERE id = $1`, [created.body.id]);
    const body = '{"messages":[]}';
    const { secrets, headers } = await signedHeaders(created.body.id, body);
    expect(secrets).toEqual([fresh]);
    expect(() => new Webhook(created.body.secret).verify(body, headers)).toThrow();
    expect((await sealed().call('GET', `/api/v1/subscriptions/${created.body.id}`)).body.previousSecretValidUntil).toBeNull();
  });

  it('answers 404 for an unknown subscription', async () => {
    expect((await sealed().call('POST', '/api/v1/subscriptions/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/rotate-secret')).status).toBe(404);
  });
});

describe('endpoint URLs (docs/delivery.md#endpoints)', () => {
  const strict = () => testClient(db, { config: { deliveryAllowPrivate: false } });
  it.each([
    'https://127.0.0.1/hook',
    'https://localhost:8443/hook',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.10/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/hook',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[fe80::1]/hook',
    'https://[fd00::1]/hook',
    'http://93.184.216.34/hook',
  ])('refuses %s at creation with 400 url_not_allowed, creating nothing', async (url) => {
    const res = await strict().call('POST', '/api/v1/subscriptions', { queue: 'ssrf', name: 'x', url });
    expect([res.status, res.body.code], res.text).toEqual([400, 'url_not_allowed']);
    expect(await db().query(`SELECT 1 FROM queen.queues WHERE name = 'ssrf'`)).toHaveLength(0);
  });

  it('takes loopback and http: endpoints with QUEEN_DELIVERY_ALLOW_PRIVATE=1', async () => {
    const open = testClient(db, { config: { deliveryAllowPrivate: true } });
    for (const [i, url] of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook'].entries()) {
      expect((await open.call('POST', '/api/v1/subscriptions', { queue: 'local-dev', name: `l${i}`, url })).status).toBe(201);
    }
  });

  it('checks a changed URL the same way', async () => {
    const created = await strict().call('POST', '/api/v1/subscriptions', { queue: 'ssrf-patch', name: 'x', url: URL_OK });
    const res = await strict().call('PATCH', `/api/v1/subscriptions/${created.body.id}`, { url: 'https://169.254.169.254/' });
    expect(res.body.code).toBe('url_not_allowed');
    expect((await strict().call('GET', `/api/v1/subscriptions/${created.body.id}`)).body.url).toBe(URL_OK);
  });
});

describe('tenancy', () => {
  const acme = () => testClient(db, { as: { tenant: 'acme' } });
  const globex = () => testClient(db, { as: { tenant: 'globex' } });

  it("treats another tenant's subscription as a missing one on every route", async () => {
    const created = await acme().call('POST', '/api/v1/subscriptions', { queue: 'shared-name', name: 'mine', url: URL_OK });
    const id = created.body.id;
    for (const [method, path, body] of [
      ['GET', `/api/v1/subscriptions/${id}`],
      ['GET', `/api/v1/subscriptions/${id}/attempts`],
      ['PATCH', `/api/v1/subscriptions/${id}`, { state: 'paused' }],
      ['POST', `/api/v1/subscriptions/${id}/rotate-secret`],
      ['DELETE', `/api/v1/subscriptions/${id}`],
    ] as const) {
      const res = await globex().call(method, path, body);
      expect([res.status, res.body.code], `${method} ${path}`).toEqual([404, 'subscription_not_found']);
    }
    expect((await globex().call('GET', '/api/v1/subscriptions')).body.subscriptions).toEqual([]);
    expect((await acme().call('GET', `/api/v1/subscriptions/${id}`)).body.state).toBe('active');
    // The same queue and subscription names are free in another tenant.
    expect((await globex().call('POST', '/api/v1/subscriptions', { queue: 'shared-name', name: 'mine', url: URL_OK })).status).toBe(201);
  });
});
