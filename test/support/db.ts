// A fresh, migrated database for one test file, on whichever backend the suite runs.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, inject } from 'vitest';
import { connect } from '../../lib/db/client.js';
import type { Database, DriverName } from '../../lib/db/types.js';
import { adminUrl, databaseUrl, testMode } from './mode.js';

export interface TestDatabase extends Database {
  /** A URL other connections (a second process, another driver) can use; undefined on PGlite. */
  url: string | undefined;
  dispose(): Promise<void>;
}

export interface FreshDatabaseOptions {
  driver?: DriverName;
  neonWsProxy?: string;
  max?: number;
}

/**
 * A fresh database for the enclosing file or describe block: made before its tests, dropped after
 * them. Returns an accessor, since the database exists only once the hook has run.
 */
export function useDatabase(options: FreshDatabaseOptions = {}): () => TestDatabase {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await freshDatabase(options);
  });
  afterAll(() => db?.dispose());
  return () => {
    if (!db) throw new Error('useDatabase(): the database exists inside tests and hooks only, after its beforeAll ran');
    return db;
  };
}

let counter = 0;

export async function freshDatabase(options: FreshDatabaseOptions = {}): Promise<TestDatabase> {
  if (testMode() === 'pg') return serverDatabase(`TEMPLATE ${inject('templateDatabase')}`, options);
  const image = new Blob([await readFile(inject('pgliteImage'))]);
  const db = await connect({ loadDataDir: image });
  return Object.assign(db, { url: undefined, dispose: () => db.close() });
}

/** A database nothing has migrated yet: its own database on the real server, or a new PGlite in memory. */
export async function emptyDatabase(): Promise<TestDatabase> {
  if (testMode() === 'pg') return serverDatabase('', { max: 1 });
  const db = await connect({});
  return Object.assign(db, { url: undefined, dispose: () => db.close() });
}

async function serverDatabase(create: string, options: FreshDatabaseOptions): Promise<TestDatabase> {
  const name = `queen_t${process.ppid}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = await connect({ url: adminUrl(), driver: 'pg', max: 1 });
  await admin.query(`CREATE DATABASE ${name} ${create}`);
  const url = databaseUrl(name);
  const db = await connect({ url, driver: options.driver ?? 'pg', neonWsProxy: options.neonWsProxy, max: options.max ?? 20 });
  return Object.assign(db, {
    url,
    async dispose() {
      await db.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    },
  });
}
