// The admin SQL functions build their whole answer as jsonb (numbers stay JSON numbers, which
// node-postgres would hand back as strings from int8 columns): one call, one value.
import type { Queryable } from './types.js';

/** Runs `SELECT <call> AS j` and returns j. */
export async function selectJson<T>(db: Queryable, call: string, params: readonly unknown[]): Promise<T> {
  const [row] = await db.query<{ j: T }>(`SELECT ${call} AS j`, params);
  return row!.j;
}
