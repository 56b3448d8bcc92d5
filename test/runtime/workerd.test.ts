// The Cloudflare deployment end to end: the Worker bundle `wrangler deploy` uploads, served by the
// real workerd binary with a config derived from wrangler.jsonc, reaching the real PostgreSQL with
// the Neon driver through the local WebSocket proxy, auth on. Two test-only Workers sit beside it:
// one fires the bundle's `scheduled` export (workerd has no cron clock), one runs the client
// example (examples/client.mjs) inside a Worker.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../../scripts/bundle.js';
import { readWranglerConfig, workerdConfigText, workerFromWrangler, type WranglerConfig } from '../../scripts/workerd-config.js';
import { startWsProxy, type WsProxy } from '../../scripts/ws-proxy.js';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { JWT_SECRET, token } from '../../support/lambda.js';
import { portFrom } from '../support/server.js';
import { SUBSCRIBED_TTL_MS } from '../../lib/broker/delivery/subscribed.js';
import { TRIGGER_WINDOW_MS } from '../../lib/http/runtime/delivery-trigger.js';
import { pushTo, receiver, type Receiver } from '../delivery/helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const WORKERD = join(root, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');

// Calls the deployed Worker's scheduled() through a service binding, as Cloudflare's cron does.
const CRON_TRIGGER = `export default {
  async fetch(request, env) {
    const cron = new URL(request.url).searchParams.get('cron');
    return Response.json(await env.QUEEN.scheduled({ cron, scheduledTime: Date.now() }));
  },
};`;

// Bundled by esbuild as wrangler would: the example imports queen-serverless-client by name.
const EXAMPLE_IN_A_WORKER = `import { Queen } from 'queen-serverless-client';
import { demo } from './examples/client.mjs';
export default {
  async fetch(request, env) {
    return Response.json(await demo(new Queen({ url: env.BASE, token: env.TOKEN }), 'edge-example'));
  },
};`;

let wrangler: WranglerConfig;
beforeAll(async () => {
  wrangler = await readWranglerConfig(join(root, 'wrangler.jsonc'));
});

describe('wrangler.jsonc', () => {
  it('deploys the bundle scripts/bundle.ts builds, through the build command, without re-bundling it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'queen-wrangler-'));
    try {
      const bundle = await bundleWorker('queen', dir);
      expect(wrangler.main).toBe(join('dist', bundle.file.slice(dir.length + 1)));
      expect(wrangler).toMatchObject({
        no_bundle: true,
        find_additional_modules: true,
        build: { command: 'npm run bundle -- workers' },
        workers_dev: true,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps a long-poll inside the 30 s a runtime update grants, runs retention hourly and the delivery sweep every minute', () => {
    expect(Number(wrangler.vars?.QUEEN_MAX_WAIT_MS)).toBeLessThan(30_000);
    expect(wrangler.vars?.QUEEN_AUTH).toBe('jwt');
    expect(wrangler.triggers?.crons).toEqual(['0 * * * *', '* * * * *']);
    expect(wrangler.secrets?.required).toEqual(['DATABASE_URL', 'JWT_SECRET']);
  });
});

describe.skipIf(testMode() !== 'pg')('the Cloudflare Worker in workerd', () => {
  let dir: string;
  let db: TestDatabase;
  let proxy: WsProxy;
  let workerd: ChildProcess;
  let log = '';
  const url: Record<'queen' | 'cron' | 'client', string> = { queen: '', cron: '', client: '' };
  const secrets = new Map<string, string>();
  let hook: Receiver;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-workerd-'));
    [db, proxy, hook] = await Promise.all([freshDatabase(), startWsProxy(), receiver(secrets)]);
    const bundle = await bundleWorker('queen', dir);
    const ports = { queen: await portFrom(7310, 7320) } as Record<keyof typeof url, number>;
    ports.cron = await portFrom(ports.queen + 1, 7320);
    ports.client = await portFrom(ports.cron + 1, 7320);
    for (const k of Object.keys(ports) as (keyof typeof url)[]) url[k] = `http://127.0.0.1:${ports[k]}`;

    await writeFile(join(dir, 'cron.js'), CRON_TRIGGER);
    await build({
      stdin: { contents: EXAMPLE_IN_A_WORKER, resolveDir: root, sourcefile: 'client-worker.mjs' },
      bundle: true,
      format: 'esm',
      outfile: join(dir, 'client.js'),
      logLevel: 'silent',
    });
    const queen = await workerFromWrangler(wrangler, bundle.dir, { DATABASE_URL: db.url!, JWT_SECRET }, [
      { name: 'NEON_WS_PROXY', text: proxy.address },
      // The receivers of the delivery tests listen on 127.0.0.1.
      { name: 'QUEEN_DELIVERY_ALLOW_PRIVATE', text: '1' },
    ]);
    const config = workerdConfigText({
      dir,
      workers: [
        queen,
        {
          name: 'cron',
          modules: [{ name: 'cron.js', kind: 'esModule', path: join(dir, 'cron.js') }],
          compatibilityDate: wrangler.compatibility_date,
          compatibilityFlags: ['service_binding_extra_handlers'],
          bindings: [{ name: 'QUEEN', service: queen.name }],
        },
        {
          name: 'client',
          modules: [{ name: 'client.js', kind: 'esModule', path: join(dir, 'client.js') }],
          compatibilityDate: wrangler.compatibility_date,
          bindings: [
            { name: 'BASE', text: url.queen },
            { name: 'TOKEN', text: await token({ role: 'read-write', sub: 'edge-example' }) },
          ],
          globalOutbound: 'internet',
        },
      ],
      sockets: [
        { service: queen.name, port: ports.queen },
        { service: 'cron', port: ports.cron },
        { service: 'client', port: ports.client },
      ],
    });
    await writeFile(join(dir, 'config.capnp'), config);
    // --experimental: the trigger Worker's scheduled() on a service binding is an experimental API.
    workerd = spawn(WORKERD, ['serve', 'config.capnp', '--experimental', '--verbose'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    workerd.stdout!.on('data', (d) => (log += d));
    workerd.stderr!.on('data', (d) => (log += d));
    await waitForHealth(url.queen, () => log);
  }, 60_000);

  afterAll(async () => {
    workerd?.kill('SIGTERM');
    await proxy?.close();
    await hook?.close();
    await db?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const send = async (role: 'admin' | 'read-write', method: string, path: string, body?: unknown) => {
    const headers = { authorization: `Bearer ${await token({ role, sub: 'edge' })}`, 'content-type': 'application/json' };
    const res = await fetch(`${url.queen}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  it('serves every route family from the one hostname, a fresh Neon pool per request', async () => {
    // configure family
    expect((await send('admin', 'POST', '/api/v1/configure', { queue: 'edge', options: { retryLimit: 0 } })).status, log).toBe(200);
    // push family, twice: a pool kept from the first request would fail on the second
    const items = Array.from({ length: 20 }, (_, i) => ({
      queue: 'edge',
      partition: 'p',
      transactionId: `edge-${i}`,
      payload: { i, pad: 'x'.repeat(500) },
    }));
    const pushed = await send('read-write', 'POST', '/api/v1/push', { items });
    expect(pushed.status, JSON.stringify(pushed.body) + log).toBe(201);
    expect(pushed.body.map((r: { status: string; offset: number }) => [r.status, r.offset])).toEqual(items.map((_, i) => ['queued', i]));
    const again = await send('read-write', 'POST', '/api/v1/push', { items: items.slice(0, 2) });
    expect(again.body.map((r: { status: string }) => r.status)).toEqual(['duplicate', 'duplicate']);

    // pop family, then the ack family: the batch completes all but the last, which fails into the DLQ
    const popped = await send('read-write', 'GET', '/api/v1/pop/queue/edge?batch=100');
    expect(popped.status).toBe(200);
    expect(popped.body.messages.map((m: { transactionId: string }) => m.transactionId)).toEqual(items.map((i) => i.transactionId));
    expect(popped.body.messages[7]).toMatchObject({ data: { i: 7, pad: 'x'.repeat(500) }, producerSub: 'edge', offset: 7 });
    const extended = await send('read-write', 'POST', `/api/v1/lease/${popped.body.leaseId}/extend`, { seconds: 120 });
    expect(extended.body).toMatchObject([{ success: true }]);
    const acks = popped.body.messages.map((m: { transactionId: string; partitionId: string }, i: number) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: popped.body.leaseId,
      status: i === items.length - 1 ? 'failed' : 'completed',
    }));
    const acked = await send('read-write', 'POST', '/api/v1/ack/batch', { acknowledgments: acks });
    expect(acked.status).toBe(200);
    expect(acked.body.every((r: { success: boolean }) => r.success)).toBe(true);
    expect(acked.body.at(-1)).toMatchObject({ dlq: true });

    // dlq family: list, detail, retry; the retried message is delivered again
    const dead = await send('admin', 'GET', '/api/v1/dlq?queue=edge');
    expect(dead.body).toMatchObject({ total: 1, messages: [{ transactionId: 'edge-19', data: { i: 19, pad: 'x'.repeat(500) } }] });
    const { partitionId } = dead.body.messages[0];
    expect((await send('admin', 'GET', `/api/v1/messages/${partitionId}/edge-19`)).status).toBe(200);
    const retried = await send('admin', 'POST', `/api/v1/messages/${partitionId}/edge-19/retry`, {});
    expect(retried.body).toMatchObject({ success: true, offset: 20 });
    const redelivered = await send('read-write', 'GET', '/api/v1/pop/queue/edge');
    expect(redelivered.body.messages).toMatchObject([{ transactionId: retried.body.transactionId, data: { i: 19 } }]);

    // the configure family's listings
    const queues = await send('admin', 'GET', '/api/v1/resources/queues');
    expect(queues.body.queues.map((q: { name: string }) => q.name)).toContain('edge');
    expect((await send('admin', 'GET', '/api/v1/consumer-groups?queue=edge')).status).toBe(200);
  });

  it('answers /health without a token and refuses an API call without one', async () => {
    expect(await (await fetch(`${url.queen}/health`)).json()).toMatchObject({ status: 'healthy', database: 'connected' });
    const refused = await fetch(`${url.queen}/api/v1/push`, { method: 'POST', body: '{"items":[]}' });
    expect(refused.status).toBe(401);
  });

  it("runs retention from the bundle's scheduled handler on wrangler.jsonc's cron", async () => {
    const configured = await send('admin', 'POST', '/api/v1/configure', {
      queue: 'edge-retained',
      options: { retentionEnabled: true, retentionSeconds: 60 },
    });
    expect(configured.status).toBe(200);
    expect((await send('read-write', 'POST', '/api/v1/push', { items: [{ queue: 'edge-retained', payload: 'old' }] })).status).toBe(201);
    const segments = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            "SELECT count(*) AS n FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'edge-retained'",
          )
        )[0]!.n,
      );
    expect(await segments()).toBe(1);
    // Age the segment instead of waiting: retention compares PostgreSQL times only.
    await db.query(
      "UPDATE queen.log_segments s SET created_at = now() - interval '2 hours' FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE s.partition_id = p.id AND q.name = 'edge-retained'",
    );

    const fired = await fetch(`${url.cron}/?cron=${encodeURIComponent(wrangler.triggers!.crons![0]!)}`);
    expect(await fired.json(), log).toMatchObject({ outcome: 'ok' });
    expect(await segments()).toBe(0);
    expect(log).toMatch(/retention: \{.*"queue":"edge-retained".*"segmentsDeleted":1/);
  });

  it('delivers a push to a subscribed queue under waitUntil, through fetch in workerd', async () => {
    const created = await send('admin', 'POST', '/api/v1/subscriptions', { queue: 'edge-hooked', name: 'hook', url: hook.url });
    expect(created.status, JSON.stringify(created.body) + log).toBe(201);
    secrets.set(created.body.id, created.body.secret);
    // This isolate read the subscribed queues for the pushes above; making the subscription here
    // dropped that copy (another isolate would see it within SUBSCRIBED_TTL_MS).
    expect(SUBSCRIBED_TTL_MS).toBeLessThanOrEqual(5_000);
    const pushed = await send('read-write', 'POST', '/api/v1/push', {
      items: [{ queue: 'edge-hooked', partition: 'p1', payload: { id: 1 } }],
    });
    expect(pushed.status).toBe(201);
    await eventually(
      () => hook.arrivals.length >= 1,
      () => log,
    );
    expect(hook.badSignatures).toEqual([]);
    expect(hook.arrivals[0]!.body).toMatchObject({
      queue: 'edge-hooked',
      partition: 'p1',
      consumerGroup: 'hook',
      messages: [{ offset: 0, data: { id: 1 } }],
    });
  });

  it("sweeps what no push triggered from the scheduled handler, on the delivery sweep's cron", async () => {
    // The previous test's triggered run claims for TRIGGER_WINDOW_MS: let it end, so that what is
    // written next, straight through the broker (no trigger), only the sweep can deliver.
    await new Promise((r) => setTimeout(r, TRIGGER_WINDOW_MS + 500));
    await pushTo(db, 'edge-hooked', ['p2'], 3);
    const before = hook.arrivals.length;
    const fired = await fetch(`${url.cron}/?cron=${encodeURIComponent('* * * * *')}`);
    expect(await fired.json(), log).toMatchObject({ outcome: 'ok' });
    expect(hook.arrivals.length).toBe(before + 1);
    expect(hook.arrivals.at(-1)!.body).toMatchObject({
      partition: 'p2',
      messages: [{ data: { n: 0 } }, { data: { n: 1 } }, { data: { n: 2 } }],
    });
    // workerd writes the Worker's log a moment after the cron trigger's answer.
    await eventually(
      () => /delivery sweep: \{"batches":1,"delivered":3/.test(log),
      () => log,
    );
  });

  it('runs the client example inside a Worker against the deployment: push, consume with its acks, empty after', async () => {
    const res = await fetch(url.client);
    expect(await res.json(), log).toEqual({
      pushed: ['queued', 'queued', 'queued'],
      consumed: [{ order: 1 }, { order: 2 }, { order: 3 }],
      empty: true,
    });
  });
});

async function eventually(check: () => boolean, log: () => string) {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting:\n${log()}`.slice(-3000));
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function waitForHealth(base: string, log: () => string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`workerd at ${base} never became healthy:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
