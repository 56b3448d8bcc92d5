// Writes docs/schema.sql, today's queen schema, from a freshly migrated in-memory PGlite.
//   npm run db:dump
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectPglite } from '../lib/db/driver-pglite.js';
import { migrate } from '../lib/db/migrate.js';
import { dumpSchema } from '../lib/db/schema-dump.js';

export const SCHEMA_DUMP = fileURLToPath(new URL('../docs/schema.sql', import.meta.url));

const db = await connectPglite({});
try {
  await migrate(db);
  await mkdir(dirname(SCHEMA_DUMP), { recursive: true });
  await writeFile(SCHEMA_DUMP, await dumpSchema(db));
  console.log(`wrote ${SCHEMA_DUMP}`);
} finally {
  await db.close();
}
