// docs/schema.sql is today's SQL in one place; a freshly migrated database must dump to exactly it
// (on PGlite in `npm test`, on the real PostgreSQL in `npm run test:pg`).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSchema } from '../../lib/db/schema-dump.js';
import { freshDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.dispose());

describe('the committed schema dump (docs/schema.sql)', () => {
  it('is what a freshly migrated database holds', async () => {
    const committed = await readFile(new URL('../../docs/schema.sql', import.meta.url), 'utf8');
    expect(await dumpSchema(db), 'docs/schema.sql is not the schema the migrations create: run `npm run db:dump` and commit it').toBe(
      committed,
    );
  });

  it('names every queen function with its signature and source file, and shows every trigger and secondary index', async () => {
    const dump = await dumpSchema(db);
    const [counts] = await db.query<{ functions: number; triggers: number; indexes: number }>(
      `SELECT (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'queen'::regnamespace) AS functions,
              (SELECT count(*)::int FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE c.relnamespace = 'queen'::regnamespace AND NOT t.tgisinternal) AS triggers,
              (SELECT count(*)::int FROM pg_indexes WHERE schemaname = 'queen' AND indexname NOT LIKE '%\\_pk' AND indexname NOT LIKE '%\\_pkey') AS indexes`,
    );
    expect(dump.match(/^-- queen\.\w+\(.*\) RETURNS .+\n-- {3}sql\/functions\/[a-z-]+\.sql$/gm)).toHaveLength(counts!.functions);
    expect(dump.match(/^CREATE TRIGGER /gm)).toHaveLength(counts!.triggers);
    expect(dump.match(/^CREATE (UNIQUE )?INDEX /gm)).toHaveLength(counts!.indexes);
    // The whole definition, on request: a statement from deep inside queen.pop_claim.
    expect(dump).not.toContain('FOR UPDATE SKIP LOCKED');
    expect(await dumpSchema(db, { functions: 'full' })).toContain('FOR UPDATE SKIP LOCKED');
  });
});
