// Embedded PostgreSQL (PGlite) for `npm start` and `npm test`. PGlite is one connection, so every
// statement and every transaction takes a turn: requests never interleave inside a transaction.
import { PGlite, types } from '@electric-sql/pglite';
import type { ConnectOptions, Database, Queryable, Row } from './types.js';

const asString = (x: string) => x;

export interface PgliteDatabase extends Database {
  /** A data-directory image another instance can start from (`loadDataDir`). */
  dumpImage(): Promise<Blob>;
}

export async function connectPglite(options: ConnectOptions): Promise<PgliteDatabase> {
  const db = await PGlite.create(options.dataDir, {
    loadDataDir: options.loadDataDir,
    // Same shapes as node-postgres: int8 and numeric as strings.
    parsers: {
      [types.INT8]: asString,
      [types.NUMERIC]: asString,
      1016: (x: string) => types.arrayParser(x, asString, 1016),
    },
  });
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = turn.then(fn, fn);
    turn = next.catch(() => {});
    return next;
  };
  const run: Queryable = {
    async query<R extends Row>(text: string, params?: readonly unknown[]) {
      const res = await db.query<R>(text, normalizeParams(params));
      return res.rows;
    },
  };
  return {
    driver: 'pglite',
    query: (text, params) => exclusive(() => run.query(text, params)),
    transaction: (fn) =>
      exclusive(async () => {
        await db.exec('BEGIN');
        try {
          const out = await fn(run);
          await db.exec('COMMIT');
          return out;
        } catch (err) {
          await db.exec('ROLLBACK');
          throw err;
        }
      }),
    close: () => exclusive(() => db.close()),
    dumpImage: () => exclusive(async () => (await db.dumpDataDir('gzip')) as Blob),
  };
}

// PGlite serialises a bigint natively but a Buffer (a Uint8Array subclass) as text; hand it
// plain Uint8Arrays.
function normalizeParams(params?: readonly unknown[]): unknown[] | undefined {
  return params?.map((p) =>
    p instanceof Uint8Array && p.constructor !== Uint8Array ? new Uint8Array(p.buffer, p.byteOffset, p.byteLength) : p,
  );
}
