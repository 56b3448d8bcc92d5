// `npm start` as a user runs it: `tsx server.ts` as a child process, driven over HTTP, stopped with
// SIGTERM and started again on the same data (PGlite in ./.queen, or the test PostgreSQL).
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { startServer } from '../support/server.js';

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
