// Delivery on AWS, in process: the Push function invokes the Deliver function asynchronously
// through a stand-in for the Lambda API (AWS_ENDPOINT_URL_LAMBDA, SigV4-signed as Lambda would
// require), the Deliver function delivers to a real receiver, and its schedule's event sweeps.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ack from '../../functions/ack.js';
import { JOB_RUNS } from '../../functions/jobs.js';
import push from '../../functions/push.js';
import { forgetSubscribedQueues, refreshSubscribedQueues } from '../../lib/broker/delivery/subscribed.js';
import type { Database } from '../../lib/db/types.js';
import { lambdaDeliveryTrigger } from '../../lib/http/runtime/delivery-trigger.js';
import { createDeliverHandler, createLambdaHandler } from '../../lib/http/runtime/lambda.js';
import { JOBS } from '../../lib/jobs.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { pushTo, receiver, subscribe, type Receiver } from '../delivery/helpers.js';
import { functionUrlEvent, JWT_SECRET, parseResult, token, type LambdaResult } from '../../support/lambda.js';

type Handler = (event: unknown, context?: unknown) => Promise<LambdaResult>;
interface Invocation {
  path: string;
  headers: IncomingHttpHeaders;
  payload: unknown;
}

describe.skipIf(testMode() !== 'pg')('the Deliver Lambda', () => {
  const db = useDatabase();
  const secrets = new Map<string, string>();
  const invocations: Invocation[] = [];
  // The runs the stand-in started; a test waits for them before it relies on nothing else claiming.
  const runs: Promise<unknown>[] = [];
  let hook: Receiver;
  let lambdaApi: Server;
  let env: Record<string, string>;
  let deliver: ReturnType<typeof createDeliverHandler>;
  let auth: { authorization: string };
  let queueId: number;

  beforeAll(async () => {
    hook = await receiver(secrets);
    // Answers 202 as Lambda does for InvocationType Event, then runs the function, as Lambda does later.
    lambdaApi = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const payload = JSON.parse(body) as unknown;
        invocations.push({ path: req.url!, headers: req.headers, payload });
        res.writeHead(202).end();
        runs.push(deliver(payload));
      });
    });
    await new Promise<void>((r) => lambdaApi.listen(0, '127.0.0.1', r));
    env = {
      DATABASE_URL: db().url!,
      JWT_SECRET,
      QUEEN_DELIVERY_ALLOW_PRIVATE: '1',
      QUEEN_DELIVER_FUNCTION: 'queen-prod-DeliverFunction-abc',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      AWS_SESSION_TOKEN: 'session-token-example',
      AWS_ENDPOINT_URL_LAMBDA: `http://127.0.0.1:${(lambdaApi.address() as AddressInfo).port}`,
    };
    deliver = createDeliverHandler(
      JOBS.find((j) => j.name === 'DeliverySweep')!,
      JOB_RUNS.DeliverySweep,
      env,
    );
    const sub = await subscribe(db(), 'lambda-hooked', 'hook', hook.url);
    secrets.set(sub.id, sub.secret);
    queueId = Number((await db().query<{ id: string }>("SELECT id FROM queen.queues WHERE name = 'lambda-hooked'"))[0]!.id);
    auth = { authorization: `Bearer ${await token({ role: 'read-write', sub: 'lambda' })}` };
  });
  afterAll(async () => {
    await Promise.all(runs);
    await hook?.close();
    await new Promise((r) => lambdaApi?.close(r));
  });

  const waitFor = async (check: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('is invoked asynchronously by a push to a subscribed queue, SigV4-signed, and delivers the push', async () => {
    // The instance's copy of the subscribed queues is stale (a cold start): the event names the queues.
    forgetSubscribedQueues();
    const handler = createLambdaHandler([push], env) as unknown as Handler;
    const res = parseResult(
      await handler(
        functionUrlEvent('POST', '/api/v1/push', {
          body: { items: [{ queue: 'lambda-hooked', partition: 'p1', payload: { id: 1 } }] },
          headers: auth,
        }),
      ),
    );
    expect(res.status).toBe(201);
    expect(invocations).toHaveLength(1);
    const [call] = invocations;
    expect(call!.path).toBe('/2015-03-31/functions/queen-prod-DeliverFunction-abc/invocations');
    expect(call!.headers['x-amz-invocation-type']).toBe('Event');
    expect(call!.headers['x-amz-security-token']).toBe('session-token-example');
    expect(call!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/lambda\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/,
    );
    expect(call!.payload).toEqual({ tenant: expect.any(String), queues: ['lambda-hooked'] });
    await waitFor(() => hook.arrivals.length === 1);
    expect(hook.badSignatures).toEqual([]);
    expect(hook.arrivals[0]!.body).toMatchObject({ queue: 'lambda-hooked', partition: 'p1', messages: [{ offset: 0, data: { id: 1 } }] });
    // The copy was read again beside that invocation: the next push names the queue's id.
    await waitFor(() => invocations.length === 1 && runs.length === 1);
    await Promise.all(runs);
    const again = parseResult(
      await handler(
        functionUrlEvent('POST', '/api/v1/push', {
          body: { items: [{ queue: 'lambda-hooked', partition: 'p1', payload: { id: 2 } }] },
          headers: auth,
        }),
      ),
    );
    expect(again.status).toBe(201);
    expect(invocations.map((i) => i.payload)).toEqual([call!.payload, { queueIds: [queueId] }]);
    await waitFor(() => hook.arrivals.length === 2);
  });

  it('never holds a push for the read of a stale copy of the subscribed queues', async () => {
    forgetSubscribedQueues();
    const real = db();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    // The real database, with the subscriptions' read held until the push's trigger has returned.
    const slow: Database = {
      driver: real.driver,
      transaction: (fn) => real.transaction(fn),
      close: () => real.close(),
      query: async (text, params) => {
        if (text.includes('queen.subscriptions')) await held;
        return real.query(text, params);
      },
    };
    const before = invocations.length;
    const trigger = lambdaDeliveryTrigger(env, () => {});
    await trigger(slow, 'default', ['lambda-plain', 'lambda-hooked']);
    expect(invocations.slice(before).map((i) => i.payload)).toEqual([{ tenant: 'default', queues: ['lambda-plain', 'lambda-hooked'] }]);
    release();
    await Promise.all(runs);
  });

  it('resolves named queues itself: nothing to do for queues without a subscription', async () => {
    await Promise.all(runs);
    expect(await deliver({ tenant: 'default', queues: ['lambda-plain', 'no-such-queue'] })).toEqual({
      batches: 0,
      delivered: 0,
      failed: 0,
      deadLettered: 0,
    });
    await pushTo(db(), 'lambda-hooked', ['p5'], 1);
    expect(await deliver({ tenant: 'default', queues: ['lambda-plain', 'lambda-hooked'] })).toMatchObject({ batches: 1, delivered: 1 });
  });

  it('is invoked for the pushes of a transaction on the Ack function, and not for a queue nobody subscribed to', async () => {
    const handler = createLambdaHandler([ack, push], env) as unknown as Handler;
    await refreshSubscribedQueues(db());
    const before = invocations.length;
    const plain = parseResult(
      await handler(functionUrlEvent('POST', '/api/v1/push', { body: { items: [{ queue: 'lambda-plain', payload: 1 }] }, headers: auth })),
    );
    expect(plain.status).toBe(201);
    expect(invocations.length).toBe(before);
    const tx = parseResult(
      await handler(
        functionUrlEvent('POST', '/api/v1/transaction', {
          body: { operations: [{ type: 'push', items: [{ queue: 'lambda-hooked', partition: 'p2', payload: { id: 2 } }] }] },
          headers: auth,
        }),
      ),
    );
    expect(tx.status).toBe(200);
    expect(invocations.length).toBe(before + 1);
    await waitFor(() => hook.arrivals.some((a) => a.body.partition === 'p2'));
  });

  it("sweeps on its schedule's event what no push triggered, and stops claiming before its time runs out", async () => {
    await Promise.all(runs);
    await pushTo(db(), 'lambda-hooked', ['p3'], 2);
    const before = hook.arrivals.length;
    const scheduled = {
      version: '0',
      id: 'e1',
      'detail-type': 'Scheduled Event',
      source: 'aws.scheduler',
      time: new Date().toISOString(),
      resources: [],
      detail: {},
    };
    const report = await deliver(scheduled, { getRemainingTimeInMillis: () => 60_000 });
    expect(report).toMatchObject({ batches: 1, delivered: 2 });
    expect(hook.arrivals.length).toBe(before + 1);
    // With less than the margin left, a run claims nothing.
    await pushTo(db(), 'lambda-hooked', ['p4'], 1);
    expect(await deliver(scheduled, { getRemainingTimeInMillis: () => 5_000 })).toMatchObject({ batches: 0 });
  });
});
