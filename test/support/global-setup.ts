// Migrates one template per run; every test file then starts from a copy of it: its own database
// on the real server, or its own PGlite instance loaded from a data-directory image.
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { connect } from '../../lib/db/client.js';
import type { Database } from '../../lib/db/types.js';
import { connectPglite } from '../../lib/db/driver-pglite.js';
import { migrate } from '../../lib/db/migrate.js';
import { adminUrl, databaseUrl, testMode } from './mode.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    pgliteImage: string;
  }
}

export default async function setup(project: TestProject) {
  if (testMode() === 'pg') {
    const template = `queen_t${process.pid}_template`;
    const admin = await connect({ url: adminUrl(), driver: 'pg', max: 1 });
    await dropDatabases(admin, (pid) => !existsSync(`/proc/${pid}`));
    await admin.query(`CREATE DATABASE ${template}`);
    const db = await connect({ url: databaseUrl(template), driver: 'pg', max: 1 });
    await migrate(db);
    await db.close();
    project.provide('templateDatabase', template);
    project.provide('pgliteImage', '');
    return async () => {
      await dropDatabases(admin, (pid) => pid === process.pid);
      await admin.close();
    };
  }
  const db = await connectPglite({});
  await migrate(db);
  const image = join(tmpdir(), `queen-pglite-${process.pid}.tar.gz`);
  await writeFile(image, new Uint8Array(await (await db.dumpImage()).arrayBuffer()));
  await db.close();
  project.provide('templateDatabase', '');
  project.provide('pgliteImage', image);
  return () => rm(image, { force: true });
}

/** Test databases are named queen_t<pid>_…; drop those whose run matches. */
async function dropDatabases(admin: Database, whose: (pid: number) => boolean) {
  const rows = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname ~ '^queen_t[0-9]+_'");
  for (const { datname } of rows) {
    const pid = Number(/^queen_t(\d+)_/.exec(datname)![1]);
    if (whose(pid)) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
}
