// Who is calling: verifies the Bearer JWT (docs/api.md#authentication) and turns its claims into a
// Principal.
import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { weakJwtSecret, type Config } from '../config.js';
import { QueenError } from '../errors.js';
import { DEFAULT_TENANT, type Principal, type Role } from './context.js';

/** Seconds of clock difference tolerated on exp/nbf/iat between the issuer and the function. */
export const CLOCK_TOLERANCE_S = 30;

// Algorithms are pinned per key type: the shared secret only verifies HS256, the JWKS only
// asymmetric signatures, so neither `alg: none` nor an HS256 token signed with a public key passes.
const SECRET_ALGORITHMS = ['HS256'];
const JWKS_ALGORITHMS = ['RS256', 'EdDSA', 'Ed25519'];

const ROLES: readonly Role[] = ['read-only', 'read-write', 'admin'];
const MAX_TENANT_LENGTH = 255;

const anonymousAdmin: Principal = { tenant: DEFAULT_TENANT, sub: null, role: 'admin' };
const secrets = new Map<string, Promise<CryptoKey>>();
const keySets = new Map<string, JWTVerifyGetKey>();

export async function authenticate(req: Request, config: Config): Promise<Principal> {
  if (config.auth === 'none') return anonymousAdmin;
  const { secret, jwksUrl } = config.jwt;
  if (!secret && !jwksUrl) {
    throw new QueenError(
      503,
      'auth_not_configured',
      'Authentication is on but no key is configured: set JWT_SECRET (HS256) or JWT_JWKS_URL (RS256/EdDSA), ' +
        'or QUEEN_AUTH=none to run without auth.',
    );
  }
  // A short secret can be guessed offline from any one token: fail closed, as with no key.
  const weak = secret ? weakJwtSecret(secret) : undefined;
  if (weak) throw new QueenError(503, 'auth_not_configured', weak);
  const token = readBearerToken(req);
  const now = Date.now();
  const known = verified.get(token);
  if (known && known.jwt === config.jwt && known.until > now) return known.principal;
  const payload = await verifyToken(token, config);
  const principal: Principal = {
    tenant: readTenant(payload, config.jwt.tenantClaim),
    sub: typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null,
    role: readRole(payload),
  };
  remember(token, principal, payload, config.jwt, now);
  return principal;
}

// Tokens this instance has verified, with the principal each carries. A client sends the same token
// with every request, and verifying it (jose's parsing and an HMAC or signature check through
// WebCrypto) was most of an authenticated push's CPU apart from the database (bench/adapters.ts).
// Keyed by the whole token, signature included, and held for the configuration that verified it;
// kept until the token expires as verification would have judged it (exp plus the clock
// tolerance) and never more than a minute, so a key withdrawn from a JWKS stops its tokens within
// one. Refusals are not kept.
const VERIFIED_MS = 60_000;
const MAX_VERIFIED = 1024;
const verified = new Map<string, { principal: Principal; jwt: Config['jwt']; until: number }>();

function remember(token: string, principal: Principal, payload: JWTPayload, jwt: Config['jwt'], now: number) {
  const expires = typeof payload.exp === 'number' ? (payload.exp + CLOCK_TOLERANCE_S) * 1000 : Infinity;
  if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
  verified.set(token, { principal, jwt, until: Math.min(now + VERIFIED_MS, expires) });
}

function readBearerToken(req: Request): string {
  const header = req.headers.get('authorization');
  if (header === null || header.trim() === '') {
    throw new QueenError(401, 'unauthenticated', 'Authentication required');
  }
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  if (!match) {
    throw invalidToken('the Authorization header must be "Bearer <JWT>"');
  }
  return match[1]!;
}

async function verifyToken(token: string, config: Config): Promise<JWTPayload> {
  const { secret, jwksUrl, issuer, audience } = config.jwt;
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw invalidToken('it is not a well-formed JWT (three base64url parts with a JSON header)');
  }
  const useSecret = alg === 'HS256' || !jwksUrl;
  const options = { issuer, audience, clockTolerance: CLOCK_TOLERANCE_S };
  try {
    if (useSecret) {
      if (!secret)
        throw invalidToken(
          `its algorithm ${String(alg)} is not accepted; this deployment verifies ${JWKS_ALGORITHMS.join('/')} tokens from JWT_JWKS_URL`,
        );
      const { payload } = await jwtVerify(token, await secretKey(secret), { ...options, algorithms: SECRET_ALGORITHMS });
      return payload;
    }
    const { payload } = await jwtVerify(token, keySet(jwksUrl!), { ...options, algorithms: JWKS_ALGORITHMS });
    return payload;
  } catch (err) {
    throw toAuthError(err, useSecret);
  }
}

function toAuthError(err: unknown, useSecret: boolean): QueenError {
  if (err instanceof QueenError) return err;
  if (err instanceof errors.JWTExpired) {
    return new QueenError(401, 'token_expired', 'The token has expired; get a new one from your identity provider.');
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf')
      return new QueenError(401, 'token_not_yet_valid', "The token is not valid yet (nbf is in the future); check the issuer's clock.");
    if (err.claim === 'iss') return invalidToken('its issuer (iss) is not the one this deployment trusts (JWT_ISSUER)');
    if (err.claim === 'aud') return invalidToken('its audience (aud) does not include this deployment (JWT_AUDIENCE)');
    return invalidToken(`its ${err.claim} claim is invalid`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return invalidToken(`its algorithm is not accepted (allowed: ${(useSecret ? SECRET_ALGORITHMS : JWKS_ALGORITHMS).join(', ')})`);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return invalidToken('its signature does not verify');
  if (err instanceof errors.JWKSNoMatchingKey) return invalidToken('no key in the JWKS matches its kid/alg');
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return invalidToken('it is malformed');
  if (useSecret) return invalidToken('it could not be verified');
  // Anything else on the JWKS path is the key server being unreachable or broken: not the caller's fault.
  return new QueenError(503, 'auth_unavailable', 'Cannot fetch the signing keys from JWT_JWKS_URL right now; retry shortly.');
}

function invalidToken(why: string): QueenError {
  return new QueenError(401, 'invalid_token', `Invalid token: ${why}.`);
}

// The secret imported once per process as an HMAC key: handed the raw bytes, jose imports them
// again on every verify (bench/adapters.ts has both).
function secretKey(secret: string): Promise<CryptoKey> {
  let key = secrets.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    secrets.set(secret, key);
  }
  return key;
}

/** One key set per URL per process: jose caches the fetched keys and refetches on an unknown kid. */
function keySet(url: string): JWTVerifyGetKey {
  let set = keySets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
    keySets.set(url, set);
  }
  return set;
}

/** The highest known role among `role` and `roles`; a token with none gets 403 rather than a guessed role. */
function readRole(payload: JWTPayload): Role {
  const claimed: unknown[] = [];
  if (Array.isArray(payload.role)) claimed.push(...payload.role);
  else if (payload.role !== undefined) claimed.push(payload.role);
  if (Array.isArray(payload.roles)) claimed.push(...payload.roles);
  let best = -1;
  for (const r of claimed) {
    const rank = ROLES.indexOf(r as Role);
    if (rank > best) best = rank;
  }
  if (best < 0) {
    throw new QueenError(
      403,
      'forbidden',
      `Your token carries no Queen role; add a "role" claim (or "roles" array) with one of: ${ROLES.join(', ')}.`,
    );
  }
  return ROLES[best]!;
}

function readTenant(payload: JWTPayload, claim: string): string {
  const value = claim in payload ? payload[claim] : readPath(payload, claim);
  if (value === undefined || value === null) return DEFAULT_TENANT;
  if (typeof value !== 'string' || value === '' || value.length > MAX_TENANT_LENGTH || /[\x00-\x1f\x7f]/.test(value)) {
    throw invalidToken(`its "${claim}" claim must be a tenant name of 1..${MAX_TENANT_LENGTH} characters without control characters`);
  }
  return value;
}

/** A dotted claim name (`org.id`) reaches into nested claims when no top-level claim has that name. */
function readPath(payload: JWTPayload, path: string): unknown {
  let node: unknown = payload;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}
