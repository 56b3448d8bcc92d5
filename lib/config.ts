// Runtime configuration, read once from the environment (process.env on Node, bindings on workerd).
export type Env = Record<string, string | undefined>;

export interface Config {
  databaseUrl: string | undefined;
  zstdLevel: number;
  auth: 'jwt' | 'none';
  jwt: {
    secret?: string;
    jwksUrl?: string;
    issuer?: string;
    audience?: string;
    tenantClaim: string;
  };
  encryptionKey?: string;
  maxBodyBytes: number;
  maxMessageBytes: number;
  maxResponseBytes: number;
  /** Longest a long-poll may wait, ms: the function's own time limit minus headroom. */
  maxWaitMs: number;
  /** /metrics/prometheus gives per-partition series only while a tenant has at most this many partitions. */
  metricsPartitionSeries: number;
  /** Named prepared statements on pg and Neon connections (QUEEN_PREPARED_STATEMENTS, on by default). */
  preparedStatements: boolean;
  /** Origins browsers may call from (QUEEN_CORS_ORIGINS); null: CORS off. */
  corsOrigins: '*' | string[] | null;
  /** QUEEN_DELIVERY_ALLOW_PRIVATE=1: subscriptions may use http: and private or loopback hosts (development, tests). */
  deliveryAllowPrivate: boolean;
}

const MiB = 1024 * 1024;

/** HS256 wants a key at least as long as its hash (RFC 7518 §3.2): 32 bytes, random. */
export const MIN_JWT_SECRET_BYTES = 32;

/** Why `secret` is refused as JWT_SECRET, with how to make one; undefined when it is long enough. */
export function weakJwtSecret(secret: string): string | undefined {
  // As many UTF-16 units as bytes at least: the common, long case costs no encoding.
  if (secret.length >= MIN_JWT_SECRET_BYTES) return undefined;
  const bytes = new TextEncoder().encode(secret).byteLength;
  if (bytes >= MIN_JWT_SECRET_BYTES) return undefined;
  return (
    `JWT_SECRET is ${bytes} byte(s); it must be at least ${MIN_JWT_SECRET_BYTES} random bytes. Make one with \`openssl rand -base64 32\` ` +
    `or \`node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"\`, then mint tokens with it.`
  );
}

export function readConfig(env: Env, defaults: { auth: 'jwt' | 'none' }): Config {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    // 1: lib/codec/segment.ts's DEFAULT_ZSTD_LEVEL, where the measured trade-off is written.
    zstdLevel: int(env, 'QUEEN_V2_ZSTD_LEVEL', 1),
    auth: authMode(env.QUEEN_AUTH, defaults.auth),
    jwt: {
      secret: env.JWT_SECRET || undefined,
      jwksUrl: env.JWT_JWKS_URL || undefined,
      issuer: env.JWT_ISSUER || undefined,
      audience: env.JWT_AUDIENCE || undefined,
      tenantClaim: env.JWT_TENANT_CLAIM || 'tenant',
    },
    encryptionKey: env.QUEEN_ENCRYPTION_KEY || undefined,
    maxBodyBytes: int(env, 'QUEEN_MAX_BODY_BYTES', 5 * MiB),
    maxMessageBytes: int(env, 'QUEEN_MAX_MESSAGE_BYTES', 4 * MiB),
    maxResponseBytes: int(env, 'QUEEN_MAX_RESPONSE_BYTES', 5 * MiB),
    maxWaitMs: int(env, 'QUEEN_MAX_WAIT_MS', 60_000),
    metricsPartitionSeries: int(env, 'QUEEN_METRICS_PARTITION_SERIES', 1000),
    preparedStatements: preparedStatements(env),
    corsOrigins: parseCorsOrigins(env.QUEEN_CORS_ORIGINS),
    deliveryAllowPrivate: flag(env, 'QUEEN_DELIVERY_ALLOW_PRIVATE'),
  };
}

/** QUEEN_CORS_ORIGINS: unset or empty is off, `*` any origin, else comma-separated origins. */
export function parseCorsOrigins(raw: string | undefined): '*' | string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  if (raw.trim() === '*') return '*';
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: string | null;
    try {
      parsed = new URL(origin).origin;
    } catch {
      parsed = null;
    }
    if (parsed !== origin) {
      throw new Error(
        'QUEEN_CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com (scheme, host, port; no path); ' +
          `got "${origin}"`,
      );
    }
    return origin;
  });
}

/** QUEEN_PREPARED_STATEMENTS: `on` (the default) or `off`, for a pooler that cannot keep them. */
export function preparedStatements(env: Env): boolean {
  const raw = env.QUEEN_PREPARED_STATEMENTS;
  if (raw === undefined || raw === '' || raw === 'on') return true;
  if (raw === 'off') return false;
  throw new Error(`QUEEN_PREPARED_STATEMENTS must be "on" or "off", got "${raw}"`);
}

// A typo must not silently switch auth off (or on): refuse to start instead.
function authMode(raw: string | undefined, fallback: 'jwt' | 'none'): 'jwt' | 'none' {
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'jwt' || raw === 'none') return raw;
  throw new Error(`QUEEN_AUTH must be "jwt" or "none", got "${raw}"`);
}

// Lifting the endpoint rules must be deliberate: only "1" (or unset/"0") is taken.
function flag(env: Env, key: string): boolean {
  const raw = env[key];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new Error(`${key} must be "1" or "0", got "${raw}"`);
}

function int(env: Env, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${key} must be a non-negative integer, got "${raw}"`);
  return n;
}
