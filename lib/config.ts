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
  /** QUEEN_DELIVERY_ALLOW_PRIVATE=1: subscriptions may use http: and private or loopback hosts (development, tests). */
  deliveryAllowPrivate: boolean;
}

const MiB = 1024 * 1024;

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
    deliveryAllowPrivate: flag(env, 'QUEEN_DELIVERY_ALLOW_PRIVATE'),
  };
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
