// `npm start` as an operator meets it: driven over HTTP, stopped by signals sent to npm or to its
// process group, on a busy port, twice on one data directory (PGlite in ./.queen), or on the test
// PostgreSQL in `npm run test:pg`.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import type { Database } from '../../lib/db/types.js';
import { migrate } from '../../lib/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { overSocket, testMode } from '../support/mode.js';
import { checkout, count, isRunning, listening, portInRange, serverPidUnder, start, waitFor, type Started } from '../support/server.js';

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('npm start (server.ts)', () => {
  let dir: string;
  let disposeCheckout: () => Promise<void>;
  let db: TestDatabase | undefined;
  let env: Record<string, string>;
  const started: Started[] = [];
  const run = (how: 'npm' | 'node', extra: Record<string, string> = {}) => {
    const s = start(dir, how, { ...env, ...extra });
    started.push(s);
    return s;
  };

  // The server's database while no server runs: the test PostgreSQL, or the checkout's ./.queen.
  const onDatabase = async (fn: (on: Database) => Promise<unknown>) => {
    if (db) return void (await fn(db));
    const local = await connect({ dataDir: join(dir, '.queen') });
    await fn(local).finally(() => local.close());
  };

  beforeAll(async () => {
    ({ dir, dispose: disposeCheckout } = await checkout());
    db = testMode() === 'pg' ? await freshDatabase() : undefined;
    env = { DATABASE_URL: db?.url ?? '' };
  });
  afterAll(async () => {
    for (const s of started) {
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        // That group has already gone.
      }
    }
    await db?.dispose();
    await disposeCheckout();
  });

  it('serves push and pop, finishes an in-flight long-poll on SIGTERM, and keeps the data across a restart', async () => {
    const port = await portInRange();
    const first = run('node', { PORT: String(port) });
    const url = await listening(first);
    expect(first.output()).toContain('auth is OFF');
    expect(first.output()).toContain(`curl -X POST ${url}/api/v1/push`);
    if (testMode() === 'pglite') expect(first.output()).toContain(join(dir, '.queen'));

    const pushed = await post(`${url}/api/v1/push`, {
      items: [{ queue: 'restart-demo', transactionId: 'kept-1', payload: { kept: true } }],
    });
    expect(pushed.status).toBe(201);

    // A long-poll on an empty queue is in flight when the signal arrives: it must still be answered.
    // The pause lets the server read the request: one still unread when the signal lands is cut.
    const inFlight = fetch(`${url}/api/v1/pop/queue/empty-demo?wait=true&timeout=3000`);
    await new Promise((r) => setTimeout(r, 1000));
    first.child.kill('SIGTERM');
    expect((await inFlight).status).toBe(204);
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('stopped cleanly');

    const second = run('node', { PORT: String(port) });
    const again = await listening(second);
    const popped = await fetch(`${again}/api/v1/pop/queue/restart-demo`);
    expect(popped.status).toBe(200);
    const body = (await popped.json()) as { messages: { transactionId: string; data: unknown }[] };
    expect(body.messages.map((m) => [m.transactionId, m.data])).toEqual([['kept-1', { kept: true }]]);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 180_000);

  it.skipIf(testMode() !== 'pg')(
    "runs on PostgreSQL's Unix socket, given as libpq's postgres://user@/db?host=/dir URL",
    async () => {
      const socket = await overSocket(db!, new URL(db!.url!).pathname.slice(1));
      const s = run('node', { PORT: String(await portInRange()), DATABASE_URL: socket.url });
      const url = await listening(s);
      expect(s.output()).toContain(`(database: pg at ${socket.dir};`);
      const pushed = await post(`${url}/api/v1/push`, { items: [{ queue: 'socket-demo', payload: { over: 'socket' } }] });
      expect(pushed.status).toBe(201);
      const popped = await fetch(`${url}/api/v1/pop/queue/socket-demo`);
      expect(((await popped.json()) as { messages: { data: unknown }[] }).messages.map((m) => m.data)).toEqual([{ over: 'socket' }]);
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    },
    120_000,
  );

  // What npm does with signals does not depend on the database: once, on the default PGlite.
  it.skipIf(testMode() !== 'pglite').each([
    ['SIGTERM', 'npm'],
    ['SIGINT', 'npm'],
    ['SIGTERM', 'its process group'],
    ['SIGINT', 'its process group'],
  ] as const)(
    'stops cleanly on %s sent to %s, leaving no server behind',
    async (signal, target) => {
      const port = await portInRange();
      const npm = run('npm', { PORT: String(port) });
      const url = await listening(npm);
      const server = await serverPidUnder(npm.child);
      process.kill(target === 'npm' ? npm.child.pid! : -npm.child.pid!, signal);
      expect(await npm.exited).toBe(0);
      expect(count(npm.output(), 'stopped cleanly')).toBe(1);
      expect(npm.output()).not.toContain('exiting now');
      expect(await isRunning(server)).toBe(false);
      await expect(fetch(`${url}/health`)).rejects.toThrow();
      expect(existsSync(join(dir, '.queen/server.pid'))).toBe(false);
    },
    180_000,
  );

  it.skipIf(testMode() !== 'pglite')(
    'stops by itself when npm is killed with SIGKILL',
    async () => {
      const npm = run('npm', { PORT: String(await portInRange()) });
      await listening(npm);
      const server = await serverPidUnder(npm.child);
      npm.child.kill('SIGKILL');
      await waitFor('the orphaned server to stop', async () => !(await isRunning(server)));
      expect(npm.output()).toContain('npm exited: finishing in-flight requests');
      expect(npm.output()).toContain('stopped cleanly');
    },
    180_000,
  );

  it('says in one line that the port is busy and how to pick another, and exits non-zero', async () => {
    const port = await portInRange();
    const occupied: Server = createServer();
    await new Promise<void>((resolve) => occupied.listen(port, '127.0.0.1', resolve));
    try {
      const s = run('node', { PORT: String(port) });
      expect(await s.exited).toBe(1);
      expect(s.output().trim().split('\n')).toEqual([
        `queen: port ${port} on 127.0.0.1 is already in use; stop what listens there, or pick another port: PORT=${port + 1} npm start`,
      ]);
      expect(existsSync(join(dir, '.queen/server.pid'))).toBe(false);
    } finally {
      await new Promise((resolve) => occupied.close(resolve));
    }
  }, 180_000);

  it('logs a retention run that deleted something and stays quiet for the runs that did not', async () => {
    const s = run('node', { PORT: String(await portInRange()), RETENTION_INTERVAL: '200' });
    const url = await listening(s);
    expect(
      (await post(`${url}/api/v1/configure`, { queue: 'expiring', options: { retentionEnabled: true, retentionSeconds: 1 } })).status,
    ).toBe(200);
    expect((await post(`${url}/api/v1/push`, { items: [{ queue: 'expiring', payload: 1 }] })).status).toBe(201);
    await waitFor('the segment to be retained', () => /retention: .*"queue":"expiring"/.test(s.output()));
    expect(count(s.output(), 'retention:')).toBe(1);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(count(s.output(), 'retention:')).toBe(1);
  }, 180_000);

  it('refuses to start on a database that applied SQL this version does not know, in one line that says what to do', async () => {
    // Reversing the first hash twice restores it.
    const flip =
      'UPDATE drizzle.__drizzle_migrations SET hash = reverse(hash) WHERE id = (SELECT min(id) FROM drizzle.__drizzle_migrations)';
    await onDatabase(async (on) => {
      await migrate(on);
      await on.query(flip);
    });
    try {
      const s = run('node', { PORT: String(await portInRange()) });
      expect(await s.exited).toBe(1);
      const lines = s.output().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^Migration 1 of drizzle\.__drizzle_migrations should be \S+ \(sha256 [0-9a-f]{64}\) but the database applied sha256 [0-9a-f]{64}, .*Nothing was changed\./,
      );
    } finally {
      await onDatabase((on) => on.query(flip));
    }
  }, 180_000);

  it.skipIf(testMode() !== 'pglite')(
    'refuses a second server on the same ./.queen, and takes over the lock of one that died',
    async () => {
      const first = run('node', { PORT: String(await portInRange()) });
      const url = await listening(first);
      const second = run('node', { PORT: String(await portInRange()) });
      expect(await second.exited).toBe(1);
      const lockFile = join(dir, '.queen/server.pid');
      expect(second.output().trim().split('\n')).toEqual([
        `Another queen server (pid ${first.child.pid}) is using ${join(dir, '.queen')}; stop it first, or start this one in another folder or with DATABASE_URL. If no such server runs, delete ${lockFile}.`,
      ]);
      expect((await fetch(`${url}/health`)).status).toBe(200);

      first.child.kill('SIGKILL');
      await first.exited;
      expect(existsSync(lockFile)).toBe(true);
      const third = run('node', { PORT: String(await portInRange()) });
      await listening(third);
      expect(third.output()).toContain(`took over the lock of server pid ${first.child.pid}, which is no longer running`);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(existsSync(lockFile)).toBe(false);
    },
    180_000,
  );

  it.skipIf(testMode() !== 'pglite')(
    'treats a lock naming a pid that no longer runs as stale',
    async () => {
      await mkdir(join(dir, '.queen'), { recursive: true });
      await writeFile(join(dir, '.queen/server.pid'), '999999999\n');
      const s = run('node', { PORT: String(await portInRange()) });
      await listening(s);
      expect(s.output()).toContain('took over the lock of server pid 999999999');
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    },
    180_000,
  );
});
