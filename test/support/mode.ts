// Which database the suite runs on: embedded PGlite (`npm test`) or the real server (`npm run test:pg`).
export type TestMode = 'pglite' | 'pg';

export const testMode = (): TestMode => (process.env.QUEEN_TEST_DB === 'pg' ? 'pg' : 'pglite');

export const adminUrl = () => process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}
