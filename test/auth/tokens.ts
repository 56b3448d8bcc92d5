// Token minting for the auth and security tests: HS256 with a shared secret, RS256/EdDSA through a JWKS served locally.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import type { Config } from '../../lib/config.js';

export const SECRET = 'queen-test-secret-0123456789abcdef';

export interface TokenOptions {
  alg?: string;
  kid?: string;
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative is in the past. */
  expiresIn?: number;
  notBeforeIn?: number;
}

type Key = Parameters<SignJWT['sign']>[0];

export async function signToken(key: Key, claims: JWTPayload, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', ...(options.kid ? { kid: options.kid } : {}) })
    .setIssuedAt(now);
  jwt.setExpirationTime(now + (options.expiresIn ?? 600));
  if (options.notBeforeIn !== undefined) jwt.setNotBefore(now + options.notBeforeIn);
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  return jwt.sign(key);
}

/** An HS256 token signed with SECRET (or another secret). */
export const hs256 = (claims: JWTPayload, options: TokenOptions & { secret?: string } = {}) =>
  signToken(new TextEncoder().encode(options.secret ?? SECRET), claims, options);

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A JWT with `alg: none` and no signature, the classic bypass attempt. */
export function unsignedToken(claims: JWTPayload): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: now, exp: now + 600, ...claims })}.`;
}

export function jwtConfig(jwt: Partial<Config['jwt']>): Partial<Config> {
  return { auth: 'jwt', jwt: { tenantClaim: 'tenant', ...jwt } };
}

export interface JwksServer {
  url: string;
  /** Signs with the RSA key published in the JWKS (RS256). */
  rs256(claims: JWTPayload, options?: TokenOptions): Promise<string>;
  /** Signs with the Ed25519 key published in the JWKS (EdDSA). */
  eddsa(claims: JWTPayload, options?: TokenOptions): Promise<string>;
  /** The RSA public key as PEM: what an algorithm-confusion attacker would use as an HMAC secret. */
  rsaPublicPem: string;
  requests: number;
  close(): Promise<void>;
}

export async function startJwksServer(): Promise<JwksServer> {
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const ed = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const keys = [
    { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
    { ...(await exportJWK(ed.publicKey)), kid: 'ed-1', alg: 'EdDSA', use: 'sig' },
  ];
  const spki = Buffer.from(await crypto.subtle.exportKey('spki', rsa.publicKey as CryptoKey)).toString('base64');
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    rs256: (claims, options = {}) => signToken(rsa.privateKey, claims, { alg: 'RS256', kid: 'rsa-1', ...options }),
    eddsa: (claims, options = {}) => signToken(ed.privateKey, claims, { alg: 'EdDSA', kid: 'ed-1', ...options }),
    rsaPublicPem: `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
