// Which database the suite runs on: embedded PGlite (`npm test`) or the real server (`npm run test:pg`).
import type { Queryable } from '../../lib/db/types.js';

export type TestMode = 'pglite' | 'pg';

export const testMode = (): TestMode => (process.env.QUEEN_TEST_DB === 'pg' ? 'pg' : 'pglite');

export const adminUrl = () => process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Database `name` over the test server's Unix socket, in libpq's form that WHATWG URL refuses
 * (`postgres://user@/db?host=/run/postgresql&port=5432`), and the socket's directory; `server` is
 * any connection to that server.
 */
export async function overSocket(server: Queryable, name: string): Promise<{ url: string; dir: string }> {
  const [row] = await server.query<{ d: string }>("SELECT current_setting('unix_socket_directories') AS d");
  const dir = row!.d.split(',')[0]!.trim();
  const tcp = new URL(adminUrl());
  return { url: `postgres://${tcp.username}@/${name}?host=${encodeURIComponent(dir)}&port=${tcp.port || 5432}`, dir };
}
