// Records each migration's sha256 in drizzle/hashes.json (test/db/manifest.test.ts checks
// it). Appends migrations not recorded yet, refuses if a recorded one changed (a landed migration
// is never edited), and drops entries whose tag left the journal (a migration renumbered at merge).
//   npm run db:manifest
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER, readMigrations } from '../lib/db/migrate.js';

const path = join(MIGRATIONS_FOLDER, 'hashes.json');
const { $comment, ...recorded } = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
const files = readMigrations();

const edited = files.filter((f) => recorded[f.tag] !== undefined && recorded[f.tag] !== f.hash);
if (edited.length) {
  console.error(
    `${edited.map((f) => `drizzle/${f.tag}.sql`).join(', ')} changed after landing: revert the edit and put the change in a new migration ` +
      '(a SQL function: edit sql/functions/, then npm run db:migration -- <what_it_does>). hashes.json is left as it was.',
  );
  process.exit(1);
}
const tags = new Set(files.map((f) => f.tag));
for (const tag of Object.keys(recorded)) if (!tags.has(tag)) console.log(`dropped ${tag}: no longer in drizzle/meta/_journal.json`);
for (const f of files) if (recorded[f.tag] === undefined) console.log(`added ${f.tag} ${f.hash}`);

const manifest = { ...Object.fromEntries(files.map((f) => [f.tag, f.hash])), $comment };
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
