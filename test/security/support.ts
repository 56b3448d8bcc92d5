// A secured app (HS256) with one admin token per tenant, and a guard that turns a test into a todo until its routes land.
import { it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { readConfig, type Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/client.js';
import { authenticate } from '../../lib/http/auth.js';
import { buildApp } from '../../lib/http/app.js';
import { testApp } from '../support/app.js';
import { bearer, hs256, jwtConfig, SECRET } from '../auth/tokens.js';

const registered = buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => Promise.reject(new Error('unused')) });

/** Which of the listed routes ("METHOD /pattern") no route family has registered yet. */
export function missingRoutes(...routes: string[]): string[] {
  return routes.filter((r) => {
    const [method, pattern] = r.split(' ');
    return !registered.routes.some((x) => x.path === pattern && (x.method === method || x.method === 'ALL'));
  });
}

/** `it` when every listed route is registered, else `it.todo` naming the missing ones. */
export function itWhen(...routes: string[]) {
  const missing = missingRoutes(...routes);
  if (missing.length === 0) return it;
  return (name: string, _fn?: unknown) => it.todo(`${name} (waiting for ${missing.join(', ')})`);
}

export type Caller = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any; text: string }>;

/** A caller acting as `sub` with `role` in `tenant`. */
export async function callerFor(db: Database, tenant: string, sub: string | null, options: { role?: string; config?: Partial<Config> } = {}): Promise<Caller> {
  const app = testApp(db, { config: { ...jwtConfig({ secret: SECRET }), ...options.config }, authenticate });
  const claims: Record<string, unknown> = { role: options.role ?? 'admin', tenant };
  if (sub !== null) claims.sub = sub;
  const headers = bearer(await hs256(claims));
  return (method, path, body) => app.call(method, path, body, headers);
}

export const enc = encodeURIComponent;
