import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig, type Config } from '../../lib/config.js';
import { QueenError } from '../../lib/errors.js';
import { authenticate, CLOCK_TOLERANCE_S } from '../../lib/http/auth.js';
import { hs256, signToken, SECRET, startJwksServer, unsignedToken, type JwksServer } from './tokens.js';

function config(jwt: Partial<Config['jwt']>, auth: Config['auth'] = 'jwt'): Config {
  const base = readConfig({}, { auth });
  return { ...base, jwt: { ...base.jwt, ...jwt } };
}

const request = (authorization?: string) =>
  new Request('http://localhost/api/v1/resources/queues', { headers: authorization === undefined ? {} : { authorization } });

async function refused(authorization: string | undefined, cfg: Config): Promise<QueenError> {
  const err = await authenticate(request(authorization), cfg).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(QueenError);
  return err as QueenError;
}

const hsConfig = config({ secret: SECRET });
const admin = { sub: 'svc-a', role: 'admin', tenant: 'acme' };

describe('authenticate with auth off', () => {
  it('makes every caller an admin of the default tenant when QUEEN_AUTH=none', async () => {
    expect(await authenticate(request(), config({}, 'none'))).toEqual({ tenant: 'default', sub: null, role: 'admin' });
  });
});

describe('authenticate with HS256', () => {
  it('turns a valid token into its tenant, subject and role', async () => {
    const token = await hs256(admin);
    expect(await authenticate(request(`Bearer ${token}`), hsConfig)).toEqual({ tenant: 'acme', sub: 'svc-a', role: 'admin' });
  });

  it('accepts the Bearer scheme in any case', async () => {
    const token = await hs256(admin);
    expect((await authenticate(request(`bearer ${token}`), hsConfig)).role).toBe('admin');
  });

  it('answers a missing Authorization header with the body of docs/api.md#authentication', async () => {
    const err = await refused(undefined, hsConfig);
    expect([err.status, err.code, err.message]).toEqual([401, 'unauthenticated', 'Authentication required']);
  });

  it('refuses a header that is not a Bearer token', async () => {
    const err = await refused(`Basic ${Buffer.from('a:b').toString('base64')}`, hsConfig);
    expect([err.status, err.code]).toEqual([401, 'invalid_token']);
    expect(err.message).toMatch(/Bearer <JWT>/);
  });

  it('refuses an expired token with token_expired', async () => {
    const err = await refused(`Bearer ${await hs256(admin, { expiresIn: -(CLOCK_TOLERANCE_S + 60) })}`, hsConfig);
    expect([err.status, err.code]).toEqual([401, 'token_expired']);
  });

  it('tolerates a token that expired within the clock tolerance', async () => {
    const token = await hs256(admin, { expiresIn: -5 });
    expect((await authenticate(request(`Bearer ${token}`), hsConfig)).sub).toBe('svc-a');
  });

  it('refuses a token it accepted before once it expires: what it remembers of a token lasts no longer than the token', async () => {
    // Valid for one more second, counting the clock tolerance.
    const token = await hs256(admin, { expiresIn: -(CLOCK_TOLERANCE_S - 1) });
    expect((await authenticate(request(`Bearer ${token}`), hsConfig)).sub).toBe('svc-a');
    expect((await authenticate(request(`Bearer ${token}`), hsConfig)).sub).toBe('svc-a');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const err = await refused(`Bearer ${token}`, hsConfig);
    expect([err.status, err.code]).toEqual([401, 'token_expired']);
  });

  it('does not take a token verified under one key for a configuration with another', async () => {
    const token = await hs256(admin);
    expect((await authenticate(request(`Bearer ${token}`), hsConfig)).role).toBe('admin');
    const err = await refused(`Bearer ${token}`, config({ secret: 'someone-elses-secret-0123456789ab' }));
    expect([err.status, err.code]).toEqual([401, 'invalid_token']);
  });

  it('refuses a token that is not valid yet', async () => {
    const err = await refused(`Bearer ${await hs256(admin, { notBeforeIn: CLOCK_TOLERANCE_S + 120 })}`, hsConfig);
    expect([err.status, err.code]).toEqual([401, 'token_not_yet_valid']);
  });

  it('refuses a token signed with another secret', async () => {
    const err = await refused(`Bearer ${await hs256(admin, { secret: 'someone-elses-secret-0123456789ab' })}`, hsConfig);
    expect([err.status, err.code]).toEqual([401, 'invalid_token']);
    expect(err.message).toMatch(/signature/);
  });

  it('refuses a token whose payload was altered after signing', async () => {
    const [h, , s] = (await hs256({ ...admin, role: 'read-only' })).split('.');
    const forged = Buffer.from(JSON.stringify({ ...admin, exp: Math.floor(Date.now() / 1000) + 600 })).toString('base64url');
    expect((await refused(`Bearer ${h}.${forged}.${s}`, hsConfig)).code).toBe('invalid_token');
  });

  it('refuses alg:none tokens', async () => {
    for (const cfg of [hsConfig, config({ secret: SECRET, jwksUrl: 'http://127.0.0.1:9/jwks' })]) {
      const err = await refused(`Bearer ${unsignedToken(admin)}`, cfg);
      expect([err.status, err.code]).toEqual([401, 'invalid_token']);
    }
  });

  it('refuses malformed tokens', async () => {
    for (const bad of ['abc', 'a.b.c', 'a.b', '....', `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.%%%.x`]) {
      const err = await refused(`Bearer ${bad}`, hsConfig);
      expect([bad, err.status, err.code]).toEqual([bad, 401, 'invalid_token']);
    }
  });

  it('checks the issuer and audience when they are configured', async () => {
    const cfg = config({ secret: SECRET, issuer: 'https://id.example', audience: 'queen' });
    const ok = await hs256(admin, { issuer: 'https://id.example', audience: 'queen' });
    expect((await authenticate(request(`Bearer ${ok}`), cfg)).tenant).toBe('acme');

    const wrongIss = await refused(`Bearer ${await hs256(admin, { issuer: 'https://evil.example', audience: 'queen' })}`, cfg);
    expect([wrongIss.status, wrongIss.code]).toEqual([401, 'invalid_token']);
    expect(wrongIss.message).toMatch(/issuer/);

    const wrongAud = await refused(`Bearer ${await hs256(admin, { issuer: 'https://id.example', audience: 'other' })}`, cfg);
    expect([wrongAud.status, wrongAud.code]).toEqual([401, 'invalid_token']);
    expect(wrongAud.message).toMatch(/audience/);

    expect((await refused(`Bearer ${await hs256(admin)}`, cfg)).code).toBe('invalid_token');
  });

  it('refuses an RS256 token when only a secret is configured', async () => {
    const jwks = await startJwksServer();
    try {
      const err = await refused(`Bearer ${await jwks.rs256(admin)}`, hsConfig);
      expect([err.status, err.code]).toEqual([401, 'invalid_token']);
    } finally {
      await jwks.close();
    }
  });
});

describe('roles and tenants from claims', () => {
  const principal = async (claims: Record<string, unknown>, cfg = hsConfig) => authenticate(request(`Bearer ${await hs256(claims)}`), cfg);

  it('takes the highest known role from role and roles', async () => {
    expect((await principal({ role: 'read-only' })).role).toBe('read-only');
    expect((await principal({ roles: ['read-only', 'admin', 'read-write'] })).role).toBe('admin');
    expect((await principal({ role: 'read-only', roles: ['read-write'] })).role).toBe('read-write');
    expect((await principal({ roles: ['superuser', 'read-write'] })).role).toBe('read-write');
  });

  it('refuses a token without any known role with 403 instead of guessing one', async () => {
    for (const claims of [{}, { role: 'superuser' }, { roles: [] }, { roles: 'admin' }, { role: 5 }]) {
      const err = await authenticate(request(`Bearer ${await hs256(claims)}`), hsConfig).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(QueenError);
      expect([(err as QueenError).status, (err as QueenError).code]).toEqual([403, 'forbidden']);
    }
  });

  it('uses the default tenant when the token has no tenant claim and keeps sub null without one', async () => {
    expect(await principal({ role: 'read-write' })).toEqual({ tenant: 'default', sub: null, role: 'read-write' });
  });

  it('reads the tenant from the configured claim, nested claims included', async () => {
    expect((await principal({ role: 'admin', org: 'globex', tenant: 'acme' }, config({ secret: SECRET, tenantClaim: 'org' }))).tenant).toBe(
      'globex',
    );
    expect((await principal({ role: 'admin', app: { org: 'initech' } }, config({ secret: SECRET, tenantClaim: 'app.org' }))).tenant).toBe(
      'initech',
    );
    expect(
      (await principal({ role: 'admin', 'https://x.io/t': 'umbrella' }, config({ secret: SECRET, tenantClaim: 'https://x.io/t' }))).tenant,
    ).toBe('umbrella');
  });

  it('refuses a tenant claim that is not a usable tenant name', async () => {
    for (const tenant of ['', 42, ['a'], 'a\nb', 'x'.repeat(256)]) {
      const err = await authenticate(request(`Bearer ${await hs256({ role: 'admin', tenant })}`), hsConfig).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as QueenError).code).toBe('invalid_token');
    }
  });
});

describe('authenticate with a JWKS', () => {
  let jwks: JwksServer;
  let jwksConfig: Config;
  beforeAll(async () => {
    jwks = await startJwksServer();
    jwksConfig = config({ jwksUrl: jwks.url, issuer: 'https://id.example', audience: 'queen' });
  });
  afterAll(() => jwks.close());
  const opts = { issuer: 'https://id.example', audience: 'queen' };

  it('accepts RS256 and EdDSA tokens signed by keys the JWKS publishes', async () => {
    expect(await authenticate(request(`Bearer ${await jwks.rs256(admin, opts)}`), jwksConfig)).toEqual({
      tenant: 'acme',
      sub: 'svc-a',
      role: 'admin',
    });
    expect((await authenticate(request(`Bearer ${await jwks.eddsa({ ...admin, sub: 'svc-b' }, opts)}`), jwksConfig)).sub).toBe('svc-b');
    expect(jwks.requests).toBeGreaterThan(0);
  });

  it('refuses expired, not-yet-valid, wrong-issuer and wrong-audience JWKS tokens', async () => {
    const cases: [string, string][] = [
      [await jwks.rs256(admin, { ...opts, expiresIn: -3600 }), 'token_expired'],
      [await jwks.eddsa(admin, { ...opts, notBeforeIn: 3600 }), 'token_not_yet_valid'],
      [await jwks.rs256(admin, { ...opts, issuer: 'https://evil.example' }), 'invalid_token'],
      [await jwks.eddsa(admin, { ...opts, audience: 'billing' }), 'invalid_token'],
    ];
    for (const [token, code] of cases) {
      const err = await refused(`Bearer ${token}`, jwksConfig);
      expect([err.status, err.code]).toEqual([401, code]);
    }
  });

  it('refuses a token signed by a key the JWKS does not publish', async () => {
    const other = await startJwksServer();
    try {
      for (const token of [await other.rs256(admin, opts), await other.eddsa(admin, opts)]) {
        const err = await refused(`Bearer ${token}`, jwksConfig);
        expect([err.status, err.code]).toEqual([401, 'invalid_token']);
      }
    } finally {
      await other.close();
    }
  });

  it('refuses an HS256 token signed with the public key (algorithm confusion)', async () => {
    const confused = await signToken(new TextEncoder().encode(jwks.rsaPublicPem), admin, { ...opts, alg: 'HS256', kid: 'rsa-1' });
    const err = await refused(`Bearer ${confused}`, jwksConfig);
    expect([err.status, err.code]).toEqual([401, 'invalid_token']);
    const both = config({ jwksUrl: jwks.url, secret: SECRET, ...opts });
    expect((await refused(`Bearer ${confused}`, both)).code).toBe('invalid_token');
  });

  it('accepts HS256 and JWKS tokens side by side when both keys are configured', async () => {
    const both = config({ jwksUrl: jwks.url, secret: SECRET, ...opts });
    expect((await authenticate(request(`Bearer ${await hs256(admin, opts)}`), both)).role).toBe('admin');
    expect((await authenticate(request(`Bearer ${await jwks.eddsa(admin, opts)}`), both)).role).toBe('admin');
  });

  it('answers 503 auth_unavailable when the JWKS cannot be fetched', async () => {
    const down = await startJwksServer();
    const url = down.url;
    const token = await down.rs256(admin);
    await down.close();
    const err = await refused(`Bearer ${token}`, config({ jwksUrl: url }));
    expect([err.status, err.code]).toEqual([503, 'auth_unavailable']);
  });
});

describe('fail closed', () => {
  it('answers 503 auth_not_configured when auth is on and no key is configured', async () => {
    const deployed = readConfig({}, { auth: 'jwt' });
    const err = await refused(`Bearer ${await hs256(admin)}`, deployed);
    expect([err.status, err.code]).toEqual([503, 'auth_not_configured']);
    expect(err.message).toMatch(/JWT_SECRET.*JWT_JWKS_URL/);
  });

  it.each(['abc', 'x'.repeat(31), 'é'.repeat(15)])(
    'answers 503 to every token when JWT_SECRET is shorter than 32 bytes (%s), saying how to make one',
    async (secret) => {
      // A token signed with the weak secret itself is refused too: it could be forged offline.
      const err = await refused(`Bearer ${await hs256(admin, { secret })}`, config({ secret }));
      expect([err.status, err.code]).toEqual([503, 'auth_not_configured']);
      expect(err.message).toMatch(
        /^JWT_SECRET is \d+ byte\(s\); it must be at least 32 random bytes\. Make one with `openssl rand -base64 32`/,
      );
    },
  );

  it('takes a secret of exactly 32 bytes, counted in UTF-8', async () => {
    for (const secret of ['x'.repeat(32), 'é'.repeat(16)]) {
      expect((await authenticate(request(`Bearer ${await hs256(admin, { secret })}`), config({ secret }))).role).toBe('admin');
    }
  });
});
