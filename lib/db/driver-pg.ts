// node-postgres (and, through the same Pool interface, the Neon driver).
import pg from 'pg';
import { SqlState, sqlState } from '../errors.js';
import type { ConnectOptions, Database, Queryable, Row } from './types.js';

export interface PoolLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PoolClientLike>;
  end(): Promise<void>;
  on?(event: 'error', listener: (err: Error) => void): unknown;
}
interface PoolClientLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  release(err?: Error | boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

export function connectPg(options: ConnectOptions & { url: string }): Database {
  const pool = new pg.Pool({ connectionString: options.url, max: options.max ?? 10 });
  return wrapPool('pg', pool);
}

export function wrapPool(driver: 'pg' | 'neon', pool: PoolLike): Database {
  // An idle client that dies (server restart, network) must not crash the process.
  pool.on?.('error', () => {});
  const run = (c: Pick<PoolLike, 'query'>): Queryable => ({
    async query<R extends Row>(text: string, params?: readonly unknown[]) {
      const res = await c.query(text, params?.map(prepareParam));
      return res.rows as R[];
    },
  });
  return {
    driver,
    query: <R extends Row>(text: string, params?: readonly unknown[]) => retryConflicts(() => run(pool).query<R>(text, params)),
    transaction: (fn) => retryConflicts(() => transaction(fn)),
    close: () => pool.end(),
  };

  async function transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a backend terminated between two
    // statements would otherwise be an unhandled 'error' that kills the process.
    const onError = (err: Error) => (broken = err);
    client.on?.('error', onError);
    try {
      await client.query('BEGIN');
      const out = await fn(run(client));
      await client.query('COMMIT');
      return out;
    } catch (err) {
      // Once the connection is lost the driver answers every later statement with a generic
      // "not queryable"; the loss itself (57P01, a reset) is what the caller must see.
      if (broken) throw broken;
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.removeListener?.('error', onError);
      client.release(broken);
    }
  }
}

/** Attempts of a statement or transaction that PostgreSQL aborted as a deadlock victim. */
export const CONFLICT_ATTEMPTS = 4;
const CONFLICTS: ReadonlySet<string | undefined> = new Set([SqlState.DEADLOCK_DETECTED, SqlState.SERIALIZATION_FAILURE]);

// A deadlock or serialization failure rolled the whole statement or transaction back, so running
// it again is safe (docs/locking.md#retries): every statement we send is one transaction, and a
// transaction's function keeps no state across attempts. Our own statements take their locks in
// one order and should never meet here; this is for what that order cannot rule out (another
// client of the database, a lock PostgreSQL takes on its own). Backs off 5-20 ms, then 10-40...
async function retryConflicts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= CONFLICT_ATTEMPTS || !CONFLICTS.has(sqlState(err))) throw err;
      const base = 5 * 2 ** (n - 1);
      await new Promise((resolve) => setTimeout(resolve, base + Math.random() * 3 * base));
    }
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

// Neither driver encodes a Uint8Array inside an array parameter (pg only knows Buffer, Neon
// neither): send bytea[] elements as PostgreSQL's hex text form.
function prepareParam(p: unknown): unknown {
  if (!Array.isArray(p) || !p.some((x) => x instanceof Uint8Array)) return p;
  return p.map((x) => (x instanceof Uint8Array ? byteaHex(x) : x));
}

function byteaHex(bytes: Uint8Array): string {
  const out = new Array<string>(bytes.length + 1);
  out[0] = '\\x';
  for (let i = 0; i < bytes.length; i++) out[i + 1] = HEX[bytes[i]!]!;
  return out.join('');
}
