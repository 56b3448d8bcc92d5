// The Cloudflare option end to end: push, pop and ack bundled as three Workers exactly as
// scripts/bundle.ts ships them, served by the real workerd binary, reaching the real PostgreSQL
// with the Neon driver through the local WebSocket proxy, auth on.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../../scripts/bundle.js';
import { startWsProxy, type WsProxy } from '../../scripts/ws-proxy.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { freePort, JWT_SECRET, token } from './support.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const WORKERD = join(root, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');
// push, pop and ack carry the flow; configure and dlq are started to prove they load and connect.
const FAMILIES = ['push', 'pop', 'ack', 'configure', 'dlq'] as const;

function capnpConfig(ports: Record<string, number>, bindings: Record<string, string>): string {
  const text = Object.entries(bindings).map(([k, v]) => `(name = ${JSON.stringify(k)}, text = ${JSON.stringify(v)})`).join(', ');
  const workers = FAMILIES.map(
    (f) => `const ${f}Worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "workers/${f}/worker.js"), (name = "./zstd.wasm", wasm = embed "workers/${f}/zstd.wasm")],
  compatibilityDate = "2025-09-01",
  bindings = [${text}],
  globalOutbound = "internet",
);`,
  );
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${FAMILIES.map((f) => `(name = "${f}", worker = .${f}Worker),`).join('\n    ')}
    # workerd refuses private and loopback addresses unless the outbound network allows them.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    ${FAMILIES.map((f) => `(name = "${f}", address = "127.0.0.1:${ports[f]}", http = (), service = "${f}"),`).join('\n    ')}
  ],
);
${workers.join('\n')}
`;
}

describe.skipIf(testMode() !== 'pg')('Cloudflare workerd', () => {
  let dir: string;
  const db = useDatabase();
  let proxy: WsProxy;
  let workerd: ChildProcess;
  let log = '';
  const base: Record<string, string> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-workerd-'));
    proxy = await startWsProxy();
    await Promise.all(FAMILIES.map((f) => bundleWorker(f, dir)));
    const ports: Record<string, number> = {};
    for (const f of FAMILIES) {
      ports[f] = await freePort();
      base[f] = `http://127.0.0.1:${ports[f]}`;
    }
    await writeFile(join(dir, 'config.capnp'), capnpConfig(ports, { DATABASE_URL: db().url!, NEON_WS_PROXY: proxy.address, JWT_SECRET }));
    workerd = spawn(WORKERD, ['serve', 'config.capnp', '--verbose'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    workerd.stdout!.on('data', (d) => (log += d));
    workerd.stderr!.on('data', (d) => (log += d));
    for (const f of FAMILIES) await waitForHealth(base[f]!, () => log);
  }, 60_000);

  afterAll(async () => {
    workerd?.kill('SIGTERM');
    await proxy?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('pushes, pops and acks through three Workers, a fresh Neon pool per request', async () => {
    const auth = { authorization: `Bearer ${await token({ role: 'read-write', sub: 'edge-producer' })}`, 'content-type': 'application/json' };
    const send = async (f: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base[f]}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const items = Array.from({ length: 20 }, (_, i) => ({ queue: 'edge', partition: 'p', transactionId: `edge-${i}`, payload: { i, pad: 'x'.repeat(500) } }));
    const pushed = await send('push', 'POST', '/api/v1/push', { items });
    expect(pushed.status, JSON.stringify(pushed.body) + log).toBe(201);
    expect(pushed.body.map((r: { status: string; offset: number }) => [r.status, r.offset])).toEqual(items.map((_, i) => ['queued', i]));
    // A second request on the same isolate: a pool kept from the first one would fail here.
    const again = await send('push', 'POST', '/api/v1/push', { items: items.slice(0, 2) });
    expect(again.body.map((r: { status: string }) => r.status)).toEqual(['duplicate', 'duplicate']);

    const popped = await send('pop', 'GET', '/api/v1/pop/queue/edge?batch=100');
    expect(popped.status).toBe(200);
    expect(popped.body.messages.map((m: { transactionId: string }) => m.transactionId)).toEqual(items.map((i) => i.transactionId));
    expect(popped.body.messages[7]).toMatchObject({ data: { i: 7, pad: 'x'.repeat(500) }, producerSub: 'edge-producer', offset: 7 });

    // Ack by transactionId only: the ack resolves offsets through the XXH3 sidecar written on workerd.
    const acks = popped.body.messages.map((m: { transactionId: string; partitionId: string }) => ({ transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' }));
    const acked = await send('ack', 'POST', '/api/v1/ack/batch', { leaseId: popped.body.leaseId, acknowledgments: acks.map((a: object) => ({ ...a, leaseId: popped.body.leaseId })) });
    expect(acked.status).toBe(200);
    expect(acked.body.every((r: { success: boolean }) => r.success)).toBe(true);
    expect((await send('pop', 'GET', '/api/v1/pop/queue/edge')).status).toBe(204);
  });

  it('refuses an API call without a token and answers /health without one on every family', async () => {
    const refused = await fetch(`${base.push}/api/v1/push`, { method: 'POST', body: '{"items":[]}' });
    expect(refused.status).toBe(401);
    for (const f of FAMILIES) {
      expect(await (await fetch(`${base[f]}/health`)).json(), f).toMatchObject({ status: 'healthy', database: 'connected' });
    }
  });

  it('lists the queue through the configure Worker and an empty DLQ through the dlq Worker', async () => {
    const admin = { authorization: `Bearer ${await token({ role: 'admin' })}` };
    const queues = (await (await fetch(`${base.configure}/api/v1/resources/queues`, { headers: admin })).json()) as { queues: { name: string }[] };
    expect(queues.queues.map((q) => q.name)).toContain('edge');
    const dlq = (await (await fetch(`${base.dlq}/api/v1/dlq?queue=edge`, { headers: admin })).json()) as { messages: unknown[]; total: number };
    expect(dlq).toMatchObject({ messages: [], total: 0 });
  });
});

async function waitForHealth(url: string, log: () => string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`workerd at ${url} never became healthy:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
