// One way for the broker to run SQL whatever the driver. Every driver hands back the same shapes:
// int8 and numeric as decimal strings, bytea as Uint8Array, timestamptz as Date, json as values.
export type Row = Record<string, unknown>;
export type DriverName = 'pglite' | 'pg' | 'neon';

export interface Queryable {
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

export interface Database extends Queryable {
  readonly driver: DriverName;
  /** Runs fn inside BEGIN/COMMIT on one connection; any throw rolls back. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Unset: embedded PGlite. A neon.tech host: the Neon driver. Anything else: node-postgres. */
  url?: string;
  /** PGlite data directory; unset means in memory. */
  dataDir?: string;
  /** PGlite: start from a dumpDataDir() image instead of an empty cluster. */
  loadDataDir?: Blob;
  /** Force a driver, e.g. the Neon driver against a plain PostgreSQL through a WebSocket proxy. */
  driver?: DriverName;
  /** Neon only: route WebSockets through this proxy (`host:port`), plain ws://. */
  neonWsProxy?: string;
  /** Pool size for pg and neon. */
  max?: number;
  /** pg and neon: named prepared statements (default true); off for poolers that cannot keep them. */
  preparedStatements?: boolean;
}
