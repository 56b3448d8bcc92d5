// A fresh, migrated database for one test file, on whichever backend the suite runs.
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { connect, type Database, type DriverName } from '../../lib/db/client.js';
import { adminUrl, databaseUrl, testMode } from './mode.js';

export interface TestDatabase extends Database {
  /** A URL other connections (a second process, another driver) can use; undefined on PGlite. */
  url: string | undefined;
  dispose(): Promise<void>;
}

interface Options {
  driver?: DriverName;
  neonWsProxy?: string;
  max?: number;
}

let counter = 0;

export async function freshDatabase(options: Options = {}): Promise<TestDatabase> {
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

async function serverDatabase(create: string, options: Options): Promise<TestDatabase> {
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
