// node-postgres (and, through the same Pool interface, the Neon driver).
import pg from 'pg';
import { isLockConflict } from '../errors.js';
import type { ConnectOptions, Database, Queryable, Row } from './types.js';

export interface PoolLike {
  query(text: string | NamedQuery, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PoolClientLike>;
  end(): Promise<void>;
  on?(event: 'error', listener: (err: Error) => void): unknown;
}
interface NamedQuery {
  name: string;
  text: string;
  values: unknown[];
}
interface PoolClientLike {
  query(text: string | NamedQuery, params?: unknown[]): Promise<{ rows: unknown[] }>;
  release(err?: Error | boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

export function connectPg(options: ConnectOptions & { url: string }): Database {
  const pool = new pg.Pool({ connectionString: options.url, max: options.max ?? 10 });
  return wrapPool('pg', pool, options.preparedStatements ?? true);
}

export function wrapPool(driver: 'pg' | 'neon', pool: PoolLike, prepared = true): Database {
  // An idle client that dies (server restart, network) must not crash the process.
  pool.on?.('error', () => {});
  const run = (c: Pick<PoolLike, 'query'>): Queryable => ({
    async query<R extends Row>(text: string, params?: readonly unknown[]) {
      const values = params?.map(prepareParam);
      const name = prepared && values ? statementName(text) : undefined;
      const res = await (name ? c.query({ name, text, values: values! }) : c.query(text, values));
      return res.rows as R[];
    },
  });
  const onPool = run(pool);
  return {
    driver,
    query: <R extends Row>(text: string, params?: readonly unknown[]) => retryConflicts(() => onPool.query<R>(text, params)),
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
      if (n >= CONFLICT_ATTEMPTS || !isLockConflict(err)) throw err;
      const base = 5 * 2 ** (n - 1);
      await new Promise((resolve) => setTimeout(resolve, base + Math.random() * 3 * base));
    }
  }
}

// Named statements: each connection parses and plans a statement once, then only binds and runs
// it (the unnamed protocol parses and plans on every call). Measured side by side (bench/ab.ts
// push pop, 4 clients x batch 100): PostgreSQL's CPU a message 0.92x pushed and 0.90x popped and
// acked (by round 0.97x and 0.94x); the server's is unchanged. A name per distinct text, so one name
// never means two statements. QUEEN_PREPARED_STATEMENTS=off for a pooler that cannot keep them
// (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
// The broker's statements are a few dozen fixed texts; past MAX_NAMED, a text runs unnamed, so
// SQL built at run time cannot grow the server's per-connection statement cache without end.
const MAX_NAMED = 256;
const names = new Map<string, string>();
function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `queen_${names.size}`;
    names.set(text, name);
  }
  return name;
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
