// `queen-serverless token`: an HS256 token signed with the deployment's JWT_SECRET, carrying the
// claims lib/http/auth.ts reads (role, tenant under JWT_TENANT_CLAIM, sub, iss/aud if configured).
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { weakJwtSecret, type Env } from '../lib/config.js';
import { CliError } from './errors.js';

export const ROLES = ['admin', 'read-write', 'read-only'] as const;
export type Role = (typeof ROLES)[number];

export interface TokenOptions {
  role: Role;
  tenant?: string;
  sub?: string;
  /** A jose time span: 30m, 1h, 7d. */
  expires: string;
  secret: string;
  issuer?: string;
  audience?: string;
  tenantClaim: string;
}

export const TOKEN_USAGE = `queen-serverless token --role admin|read-write|read-only [--tenant T] [--sub S] [--expires 1h]
                       [--key-file FILE] [--issuer I] [--audience A]
  Prints a token signed with JWT_SECRET (or the secret in --key-file). JWT_ISSUER, JWT_AUDIENCE and
  JWT_TENANT_CLAIM are read as the deployment reads them.`;

export async function tokenCommand(args: string[], env: Env): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      role: { type: 'string' },
      tenant: { type: 'string' },
      sub: { type: 'string' },
      expires: { type: 'string', default: '1h' },
      'key-file': { type: 'string' },
      issuer: { type: 'string' },
      audience: { type: 'string' },
    },
  });
  const role = values.role;
  if (!isRole(role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}${role ? `, got "${role}"` : ''}`);
  const secret = values['key-file'] ? await readKeyFile(values['key-file']) : env.JWT_SECRET;
  if (!secret) {
    throw new CliError("no signing key: set JWT_SECRET to the deployment's secret, or pass --key-file <file that holds it>");
  }
  console.log(
    await mintToken({
      role,
      tenant: values.tenant,
      sub: values.sub,
      expires: values.expires,
      secret,
      issuer: values.issuer ?? (env.JWT_ISSUER || undefined),
      audience: values.audience ?? (env.JWT_AUDIENCE || undefined),
      tenantClaim: env.JWT_TENANT_CLAIM || 'tenant',
    }),
  );
}

export async function mintToken(o: TokenOptions): Promise<string> {
  // The deployment refuses such a secret (lib/http/auth.ts): a token signed with it would not pass.
  const weak = weakJwtSecret(o.secret);
  if (weak) throw new CliError(weak);
  const claims: Record<string, string> = { role: o.role };
  if (o.tenant) claims[o.tenantClaim] = o.tenant;
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (o.sub) jwt.setSubject(o.sub);
  if (o.issuer) jwt.setIssuer(o.issuer);
  if (o.audience) jwt.setAudience(o.audience);
  try {
    jwt.setExpirationTime(o.expires);
  } catch {
    throw new CliError(`--expires must be a time span such as 30m, 1h or 7d, got "${o.expires}"`);
  }
  return jwt.sign(new TextEncoder().encode(o.secret));
}

function isRole(value: string | undefined): value is Role {
  return (ROLES as readonly (string | undefined)[]).includes(value);
}

async function readKeyFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read --key-file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  // A key file written by `echo` or an editor ends in a newline that is not part of the secret.
  const secret = text.replace(/\r?\n$/, '');
  if (!secret) throw new CliError(`--key-file ${path} is empty`);
  return secret;
}
