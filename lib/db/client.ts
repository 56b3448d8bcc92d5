// Picks and opens the driver for a URL (PGlite when there is none), and observes statements for tests.
import type { ConnectOptions, Database, DriverName, Queryable } from './types.js';

export function chooseDriver(url: string | undefined): DriverName {
  if (!url) return 'pglite';
  const host = safeHost(url);
  return host.endsWith('.neon.tech') || host.endsWith('.neon.build') ? 'neon' : 'pg';
}

/**
 * Where a database URL points, for a log line: its host (with the port when `port` and the URL
 * name one), or the socket directory of libpq's `postgres://user@/db?host=/run/postgresql` (a form
 * WHATWG URL refuses, which pg accepts).
 */
export function databaseHost(url: string, { port = true } = {}): string {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (parsed?.hostname) return port ? parsed.host : parsed.hostname;
  const socket = SOCKET_HOST.exec(url)?.[1];
  return socket ? decodeURIComponent(socket) : "libpq's default socket";
}

// libpq's Unix-socket URL: no host before the path, the socket directory in `host=`.
const SOCKET_FORM = /^postgres(?:ql)?:\/\/(?:[^/?#@\s]*@)?\/[^?#\s]*(?:\?[^#\s]*)?$/;
const SOCKET_HOST = /[?&]host=([^&#]*)/;

/** A URL pg can connect with: WHATWG's, or libpq's socket form `postgres://user@/db?host=/dir`. */
export function isDatabaseUrl(url: string): boolean {
  return URL.canParse(url) || SOCKET_FORM.test(url);
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
      return db.transaction((tx) => fn(wrap(tx))).finally(() => log.statements.push('COMMIT'));
    },
    close: () => db.close(),
  };
}
