// A landed migration is never edited: drizzle/hashes.json records every migration's sha256
// and this test fails when a file no longer matches it.
import { describe, expect, it } from 'vitest';
import manifest from '../../drizzle/hashes.json' with { type: 'json' };
import { readMigrations } from '../../lib/db/migrate.js';
import { SUPERSEDED_HASHES } from '../../lib/db/migration-history.js';
import { shippedMigrations } from '../../lib/db/schema-version.js';

const { $comment: _, ...recorded } = manifest as Record<string, string>;
const files = readMigrations();

describe('the migration manifest (drizzle/hashes.json)', () => {
  it('records every migration in the journal, and each file still has the hash it landed with', () => {
    for (const f of files) {
      expect(
        recorded[f.tag],
        `drizzle/${f.tag}.sql is not in drizzle/hashes.json: run \`npm run db:manifest\` and commit the manifest`,
      ).toBeDefined();
      expect(
        f.hash,
        `drizzle/${f.tag}.sql changed after it landed: databases that ran it would keep the old SQL. Revert the edit and put the ` +
          'change in a new migration (a SQL function: edit sql/functions/, then npm run db:migration -- <what_it_does>), then `npm run db:manifest`',
      ).toBe(recorded[f.tag]);
    }
  });

  it('records nothing that is not in the journal', () => {
    const tags = files.map((f) => f.tag);
    expect(Object.keys(recorded), 'hashes.json lists a migration the journal does not have: run `npm run db:manifest`').toEqual(tags);
  });

  it('gives deployed functions the same list the migrator applies', () => {
    expect(shippedMigrations()).toEqual(files.map(({ tag, hash }) => ({ tag, hash })));
  });

  it('knows superseded versions only of migrations that exist, and never today’s version as superseded', () => {
    for (const [tag, versions] of Object.entries(SUPERSEDED_HASHES)) {
      expect(recorded[tag]).toBeDefined();
      expect(Object.keys(versions)).not.toContain(recorded[tag]);
    }
  });
});
