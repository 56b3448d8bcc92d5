// A secured app (HS256) with one admin token per tenant.
import type { Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/types.js';
import { authenticate } from '../../lib/http/auth.js';
import { testClient, type TestClient } from '../support/client.js';
import { bearer, hs256, jwtConfig, SECRET } from '../auth/tokens.js';

export type Caller = TestClient['call'];

/** A caller acting as `sub` with `role` in `tenant`. */
export async function callerFor(
  db: Database | (() => Database),
  tenant: string,
  sub: string | null,
  options: { role?: string; config?: Partial<Config> } = {},
): Promise<Caller> {
  const claims: Record<string, unknown> = { role: options.role ?? 'admin', tenant };
  if (sub !== null) claims.sub = sub;
  const headers = bearer(await hs256(claims));
  return testClient(db, { config: { ...jwtConfig({ secret: SECRET }), ...options.config }, authenticate, headers }).call;
}

export const enc = encodeURIComponent;
