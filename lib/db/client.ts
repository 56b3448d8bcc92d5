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
}

export function chooseDriver(url: string | undefined): DriverName {
  if (!url) return 'pglite';
  const host = safeHost(url);
  return host.endsWith('.neon.tech') || host.endsWith('.neon.build') ? 'neon' : 'pg';
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

export async function connect(options: ConnectOptions = {}): Promise<Database> {
  const driver = options.driver ?? chooseDriver(options.url);
  switch (driver) {
    case 'pglite': {
      const { connectPglite } = await import('./driver-pglite.js');
      return connectPglite(options);
    }
    case 'pg': {
      const { connectPg } = await import('./driver-pg.js');
      return connectPg(requireUrl(options));
    }
    case 'neon': {
      const { connectNeon } = await import('./driver-neon.js');
      return connectNeon(requireUrl(options));
    }
  }
}

function requireUrl(options: ConnectOptions): ConnectOptions & { url: string } {
  if (!options.url) throw new Error('a database URL is required for the pg and neon drivers');
  return options as ConnectOptions & { url: string };
}

/** Counts statements sent, so tests can prove a route costs one round trip. */
export interface StatementLog {
  statements: string[];
}

export function observe(db: Database, log: StatementLog): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (text, params) => {
      log.statements.push(text);
      return q.query(text, params);
    },
  });
  return {
    driver: db.driver,
    query: wrap(db).query,
    transaction: (fn) => {
      log.statements.push('BEGIN');
      return db
        .transaction((tx) => fn(wrap(tx)))
        .finally(() => log.statements.push('COMMIT'));
    },
    close: () => db.close(),
  };
}
