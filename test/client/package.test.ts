// The package as a user gets it: `npm pack` in client/, installed offline into an empty project,
// then used from Node 20, type-checked by a strict TypeScript file, bundled into a Worker run by
// workerd, and loaded in headless Chromium from another origin against `npm start` with CORS on.
import { execFile } from 'node:child_process';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWranglerConfig, workerdConfigText } from '../../scripts/workerd-config.js';
import { testMode } from '../support/mode.js';
import { portFrom, root } from '../support/server.js';
import { NODE_APP, USER_TS, WORKER } from './package-fixtures.js';
import { startBroker, unique, type Broker } from './support.js';

const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
const WORKERD = join(root, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');
const SECRET = `whsec_${Buffer.from('a secret of the test subscription!').toString('base64')}`;

describe.skipIf(testMode() !== 'pg')('the packed queen-serverless-client', () => {
  let dir: string;
  let broker: Broker;
  let page: Server;
  let pageOrigin: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-user-'));
    const { stdout } = await run('npm', ['pack', '--pack-destination', dir, '--json'], { cwd: join(root, 'client') });
    const tarball = join(dir, JSON.parse(stdout)[0].filename);
    const app = join(dir, 'app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'user-app', private: true, type: 'module' }));
    // Offline: the tarball has no dependencies, so no registry is needed.
    await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], { cwd: app });
    // The page Chromium loads, on an origin of its own: the package's files and an import map.
    page = createServer(async (req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      const file = join(app, 'node_modules/queen-serverless-client', path.replace(/^\/pkg\//, ''));
      const text = await readFile(file, 'utf8').catch(() => null);
      if (text === null) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': extname(file) === '.js' ? 'text/javascript' : 'text/plain' }).end(text);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
    broker = await startBroker({ QUEEN_CORS_ORIGINS: pageOrigin });
  }, 180_000);

  afterAll(async () => {
    await broker?.stop();
    page?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const app = () => join(dir, 'app');

  it('installs with no dependencies, ESM with its declarations', async () => {
    const pkg = JSON.parse(await readFile(join(app(), 'node_modules/queen-serverless-client/package.json'), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.type).toBe('module');
    expect(existsSync(join(app(), 'node_modules/queen-serverless-client', pkg.types))).toBe(true);
    const lock = JSON.parse(await readFile(join(app(), 'package-lock.json'), 'utf8'));
    expect(Object.keys(lock.packages).filter((p) => p.startsWith('node_modules/'))).toEqual(['node_modules/queen-serverless-client']);
  });

  it('pushes, pops, acks, consumes and commits a transaction from Node 20', async () => {
    await writeFile(join(app(), 'app.mjs'), NODE_APP);
    const { stdout } = await run(process.execPath, ['app.mjs', broker.url, unique('node')], { cwd: app() });
    expect(JSON.parse(stdout)).toEqual({
      pushed: ['queued', 'queued', 'queued'],
      popped: [1],
      consumed: [2, 3],
      moved: true,
      empty: true,
      error: 'invalid_item',
    });
  });

  it('type-checks a strict TypeScript user file against the packed declarations', async () => {
    await writeFile(join(app(), 'user.ts'), USER_TS);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        types: [],
        skipLibCheck: false,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
      },
      files: ['user.ts'],
    };
    await writeFile(join(app(), 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', app()]).catch((err: { stdout: string }) => err);
    expect(result.stdout).toBe('');
  }, 60_000);

  describe('in workerd', () => {
    let workerd: ChildProcess;
    let log = '';
    let url: string;

    beforeAll(async () => {
      // What wrangler does with a Worker: esbuild bundles it, resolving the package from node_modules.
      await writeFile(join(app(), 'worker.js'), WORKER);
      await build({
        entryPoints: [join(app(), 'worker.js')],
        bundle: true,
        format: 'esm',
        outfile: join(app(), 'dist/worker.js'),
        logLevel: 'silent',
      });
      const port = await portFrom(7380, 7390);
      url = `http://127.0.0.1:${port}`;
      const wrangler = await readWranglerConfig(join(root, 'wrangler.jsonc'));
      const config = workerdConfigText({
        dir: app(),
        workers: [
          {
            name: 'app',
            modules: [{ name: 'worker.js', kind: 'esModule', path: join(app(), 'dist/worker.js') }],
            compatibilityDate: wrangler.compatibility_date,
            bindings: [
              { name: 'QUEEN_URL', text: broker.url },
              { name: 'DELIVERY_SECRET', text: SECRET },
            ],
            globalOutbound: 'internet',
          },
        ],
        sockets: [{ service: 'app', port }],
      });
      await writeFile(join(app(), 'config.capnp'), config);
      workerd = spawn(WORKERD, ['serve', 'config.capnp', '--verbose'], { cwd: app(), stdio: ['ignore', 'pipe', 'pipe'] });
      workerd.stdout!.on('data', (d) => (log += d));
      workerd.stderr!.on('data', (d) => (log += d));
      const deadline = Date.now() + 30_000;
      while (
        !(await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        ))
      ) {
        if (Date.now() > deadline) throw new Error(`workerd never answered:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }, 60_000);
    afterAll(() => workerd?.kill('SIGTERM'));

    it('pushes, pops and acks through the client inside a Worker', async () => {
      const res = await fetch(`${url}/demo?queue=${unique('edge')}`);
      expect(await res.json(), log).toEqual({
        pushed: ['queued', 'queued', 'queued'],
        popped: [{ order: 1 }, { order: 2 }, { order: 3 }],
        acked: true,
        empty: true,
      });
    });

    it('receives a delivery signed by standardwebhooks with deliveryHandler: 200 with acks, 401 when forged', async () => {
      const body = JSON.stringify({
        subscription: 's',
        queue: 'orders',
        partition: 'p',
        partitionId: '1',
        consumerGroup: 'g',
        attempt: 1,
        messages: [
          {
            offset: 0,
            transactionId: 't0',
            messageId: 'm0',
            createdAt: new Date().toISOString(),
            traceId: null,
            producerSub: null,
            data: { order: 1 },
          },
          {
            offset: 1,
            transactionId: 't1',
            messageId: 'm1',
            createdAt: new Date().toISOString(),
            traceId: null,
            producerSub: null,
            data: { order: 'bad' },
          },
        ],
      });
      const now = new Date();
      const headers = (secret: string) => ({
        'content-type': 'application/json',
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign('msg_1', now, body),
      });
      const ok = await fetch(`${url}/hook`, { method: 'POST', headers: headers(SECRET), body });
      expect([ok.status, await ok.json()], log).toEqual([200, { acks: [{ offset: 1, status: 'dlq', error: 'order is not a number' }] }]);
      const forged = await fetch(`${url}/hook`, {
        method: 'POST',
        headers: headers(`whsec_${Buffer.from('another secret entirely, 32 b!').toString('base64')}`),
        body,
      });
      expect(forged.status).toBe(401);
    });
  });

  it.skipIf(!existsSync(CHROMIUM))(
    `works in headless Chromium from another origin with QUEEN_CORS_ORIGINS (skipped when ${CHROMIUM} is absent: apt-get install -y chromium)`,
    async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      try {
        const tab = await browser.newPage();
        const failures: string[] = [];
        tab.on('console', (m) => m.type() === 'error' && failures.push(m.text()));
        await tab.goto(pageOrigin);
        const now = new Date();
        const body = '{"subscription":"s","queue":"q","partition":"p","partitionId":"1","consumerGroup":"g","attempt":2,"messages":[]}';
        const signature = new Webhook(SECRET).sign('msg_b', now, body);
        await tab.waitForFunction(() => 'run' in window);
        const result = await tab.evaluate((a) => (window as unknown as { run(a: unknown): Promise<unknown> }).run(a), {
          url: broker.url,
          queue: unique('browser'),
          secret: SECRET,
          body,
          signature,
          timestamp: String(Math.floor(now.getTime() / 1000)),
        });
        expect(result, failures.join('\n')).toEqual({
          origin: pageOrigin,
          pushed: ['queued', 'queued'],
          consumed: ['a', 'b'],
          empty: true,
          verified: 2,
        });
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  if (!existsSync(CHROMIUM))
    console.warn(`the Chromium test is skipped: ${CHROMIUM} is absent (apt-get install -y chromium; .ci/run installs it)`);
});

// The page: the bare specifier resolves through its import map, as a bundler would resolve it.
const PAGE = `<!doctype html><meta charset="utf-8"><title>queen-serverless-client in a browser</title>
<script type="importmap">{"imports":{"queen-serverless-client":"/pkg/dist/index.js"}}</script>
<script type="module">
import { Queen, verifyDelivery } from 'queen-serverless-client';
window.run = async (a) => {
  const queen = new Queen({ url: a.url });
  const pushed = await queen.push(a.queue, [{ data: 'a' }, { data: 'b' }]);
  const consumed = [];
  const stop = new AbortController();
  await queen.consume(a.queue, (m) => { consumed.push(m.data); if (consumed.length === 2) stop.abort(); }, { signal: stop.signal, waitMs: 2000 });
  const headers = { 'webhook-id': 'msg_b', 'webhook-timestamp': a.timestamp, 'webhook-signature': a.signature };
  const delivery = await verifyDelivery({ headers, body: a.body }, a.secret);
  return { origin: location.origin, pushed: pushed.map((r) => r.status), consumed, empty: (await queen.pop(a.queue)) === null, verified: delivery.attempt };
};
</script>`;
