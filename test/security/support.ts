// A secured app (HS256) with one admin token per tenant.
import type { Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/types.js';
import { authenticate } from '../../lib/http/auth.js';
import { testApp } from '../support/app.js';
import { bearer, hs256, jwtConfig, SECRET } from '../auth/tokens.js';

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
