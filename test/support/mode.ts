// Which database the suite runs on: embedded PGlite (`npm test`) or the real server (`npm run test:pg`).
export type TestMode = 'pglite' | 'pg';

export const testMode = (): TestMode => (process.env.QUEEN_TEST_DB === 'pg' ? 'pg' : 'pglite');

export const adminUrl = () => process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The same database over the test server's Unix socket, in libpq's form that WHATWG URL refuses
 * (`postgres://user@/db?host=/run/postgresql&port=5432`); `socketDir` is from `SHOW unix_socket_directories`.
 */
export function socketUrl(name: string, socketDir: string): string {
  const tcp = new URL(adminUrl());
  return `postgres://${tcp.username}@/${name}?host=${encodeURIComponent(socketDir)}&port=${tcp.port || 5432}`;
}
