// `npm start` as a user runs it: `tsx server.ts` as a child process, driven over HTTP, stopped with
// SIGTERM and started again on the same data (PGlite in ./.queen, or the test PostgreSQL).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function startServer(cwd: string, env: Record<string, string>): Promise<Running> {
  const child = spawn(join(root, 'node_modules/.bin/tsx'), [join(root, 'server.ts')], {
    cwd,
    env: { ...process.env, PORT: '0', RETENTION_INTERVAL: '500', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('then: curl')) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return { child, url, output: () => output, exited };
}

async function waitFor(what: string, check: () => boolean, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npm start (server.ts)', () => {
  let dir: string;
  const db = testMode() === 'pg' ? useDatabase() : undefined;
  let env: Record<string, string>;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-server-'));
    env = { DATABASE_URL: db ? db().url! : '' };
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('serves push and pop, finishes an in-flight long-poll on SIGTERM, and keeps the data across a restart', async () => {
    const first = await startServer(dir, env);
    children.push(first.child);
    expect(first.output()).toContain('auth is OFF');
    expect(first.output()).toContain(`curl -X POST ${first.url}/api/v1/push`);
    if (testMode() === 'pglite') expect(first.output()).toContain(join(dir, '.queen'));

    const pushed = await fetch(`${first.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ queue: 'restart-demo', transactionId: 'kept-1', payload: { kept: true } }] }),
    });
    expect(pushed.status).toBe(201);
    await waitFor('a retention run', () => /retention: \{/.test(first.output()));

    // A long-poll on an empty queue is in flight when the signal arrives: it must still be answered.
    // The pause lets the server read the request: one still unread when the signal lands is cut.
    const inFlight = fetch(`${first.url}/api/v1/pop/queue/empty-demo?wait=true&timeout=3000`);
    await new Promise((r) => setTimeout(r, 1000));
    first.child.kill('SIGTERM');
    expect((await inFlight).status).toBe(204);
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('stopped cleanly');

    const second = await startServer(dir, env);
    children.push(second.child);
    const popped = await fetch(`${second.url}/api/v1/pop/queue/restart-demo`);
    expect(popped.status).toBe(200);
    const body = (await popped.json()) as { messages: { transactionId: string; data: unknown }[] };
    expect(body.messages.map((m) => [m.transactionId, m.data])).toEqual([['kept-1', { kept: true }]]);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 120_000);
});
