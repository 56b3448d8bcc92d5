// The server the client tests talk to: `npm start`'s server in a temporary folder, on a fresh
// database of the real PostgreSQL (`npm run test:pg`) or on its own PGlite (`npm test`).
import { mkdtemp, rm } from 'node:fs/promises';
import { afterAll, beforeAll } from 'vitest';
import { Queen } from '../../client/src/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, createServer, type Socket } from 'node:net';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { startServer, type RunningServer } from '../support/server.js';

export interface Broker {
  url: string;
  server: RunningServer;
  db: TestDatabase | undefined;
  stop(): Promise<void>;
}

export async function startBroker(env: Record<string, string> = {}): Promise<Broker> {
  const dir = await mkdtemp(join(tmpdir(), 'queen-client-'));
  const db = testMode() === 'pg' ? await freshDatabase() : undefined;
  const server = await startServer(dir, { DATABASE_URL: db?.url ?? '', ...env });
  return {
    url: server.url,
    server,
    db,
    async stop() {
      await server.stop();
      await db?.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One broker for a test file and a client of it, set in beforeAll (read them inside tests and hooks). */
export function useBroker(env: Record<string, string> = {}): { broker: Broker; queen: Queen } {
  const used = {} as { broker: Broker; queen: Queen };
  beforeAll(async () => {
    used.broker = await startBroker(env);
    used.queen = new Queen({ url: used.broker.url });
  });
  afterAll(() => used.broker?.stop());
  return used;
}

/** A TCP proxy in front of the broker that can drop every connection and refuse new ones: a network outage. */
export async function outageProxy(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = createConnection(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    /** Destroys every open connection and refuses new ones until `restore`. */
    cut() {
      down = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      down = false;
    },
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), [...sockets].forEach((s) => s.destroy()))),
  };
}

export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
