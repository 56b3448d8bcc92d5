import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import type { BrokerEnv } from '../../lib/http/context.js';
import { readConfig } from '../../lib/config.js';
import { authenticate } from '../../lib/http/auth.js';
import { useDatabase } from '../support/db.js';
import { testClient } from '../support/client.js';
import { ROLES, ROUTES, allows, describeRoute } from './routes.js';
import { bearer, hs256, jwtConfig, SECRET, unsignedToken } from './tokens.js';

const db = useDatabase();

// CORS on, as for a browser client: a refusal must still be readable cross-origin.
const secured = () => testClient(db, { config: { ...jwtConfig({ secret: SECRET }), corsOrigins: '*' }, authenticate });

describe('every route but /health needs a valid token', () => {
  it('keeps GET /health open without a token, even when no key is configured', async () => {
    for (const config of [jwtConfig({ secret: SECRET }), jwtConfig({})]) {
      const res = await testClient(db, { config, authenticate }).call('GET', '/health');
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('healthy');
    }
  });

  it('answers CORS preflight without a token', async () => {
    const res = await secured().app.request('/api/v1/push', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each(ROUTES.map((r) => [describeRoute(r), r] as const))(
    '%s without a token answers 401 unauthenticated, readable cross-origin',
    async (_, route) => {
      const res = await secured().call(route.method, route.path, route.body);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Authentication required', code: 'unauthenticated' });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    },
  );

  it.each(ROUTES.map((r) => [describeRoute(r), r] as const))('%s with a forged or expired token answers 401', async (_, route) => {
    const app = secured();
    for (const token of [
      unsignedToken({ role: 'admin' }),
      await hs256({ role: 'admin' }, { expiresIn: -3600 }),
      await hs256({ role: 'admin' }, { secret: 'x'.repeat(32) }),
    ]) {
      const res = await app.call(route.method, route.path, route.body, bearer(token));
      expect(res.status).toBe(401);
      expect(['invalid_token', 'token_expired']).toContain(res.body.code);
    }
  });

  it.each(ROUTES.map((r) => [describeRoute(r), r] as const))(
    '%s fails closed with 503 when auth is on and no key is configured',
    async (_, route) => {
      const app = testClient(db, { config: readConfig({}, { auth: 'jwt' }), authenticate });
      const res = await app.call(route.method, route.path, route.body, bearer(await hs256({ role: 'admin' })));
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('auth_not_configured');
    },
  );

  it('makes no change to the database when a write is refused for lack of a token', async () => {
    const before = await db().query<{ n: string }>('SELECT count(*) AS n FROM queen.queues');
    await secured().call('POST', '/api/v1/push', { items: [{ queue: 'unauth-write', payload: 1 }] });
    await secured().call('POST', '/api/v1/configure', { queue: 'unauth-config' }, bearer(await hs256({ role: 'read-write' })));
    expect(await db().query('SELECT count(*) AS n FROM queen.queues')).toEqual(before);
  });
});

describe('role matrix (docs/semantics.md#tenancy-and-roles: read-only ⊂ read-write ⊂ admin)', () => {
  it('lists every route the function families register', () => {
    const registered = allFunctions.flatMap((fn) => {
      const app = new Hono<BrokerEnv>();
      fn.routes(app);
      return app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`);
    });
    expect([...new Set(registered)].sort()).toEqual(ROUTES.map(describeRoute).sort());
  });

  for (const route of ROUTES) {
    for (const role of ROLES) {
      const verdict = allows(role, route.role) ? 'is let through' : 'is refused with 403';
      it(`${describeRoute(route)} as ${role} ${verdict}`, async () => {
        const token = await hs256({ sub: `rm-${role}`, role, tenant: 'role-matrix' });
        const res = await secured().call(route.method, route.path, route.body, bearer(token));
        if (allows(role, route.role)) {
          expect([401, 403]).not.toContain(res.status);
          if (route.answers) expect([res.status, res.body.code]).toEqual([route.answers, 'not_supported']);
          else expect(res.status).toBeLessThan(500);
          expect(res.body?.code).not.toBe('route_not_found');
        } else {
          expect(res.status).toBe(403);
          expect(res.body.code).toBe('forbidden');
          expect(res.body.error).toContain(route.role);
        }
      });
    }
  }
});
