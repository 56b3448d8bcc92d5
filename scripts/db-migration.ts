// Writes the next drizzle migration from what changed in sql/functions/: edit a function's source,
// run this, review the source's diff. The migration holds only the functions whose definition or
// comment changed (a DROP first where CREATE OR REPLACE cannot change a result type), found by
// running the sources against a freshly migrated in-memory PGlite. Then it refreshes
// drizzle/hashes.json and docs/schema.sql.
//   npm run db:migration -- <what_it_does>     (snake_case, as the migration's name)
//   npm run db:migration -- --check            (exit 1 if sql/functions/ has changes no migration holds)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareSources } from '../lib/db/function-sources.js';
import { connectPglite } from '../lib/db/driver-pglite.js';
import { MIGRATIONS_FOLDER, migrate } from '../lib/db/migrate.js';

const arg = process.argv[2];
if (!arg || !/^(--check|[a-z][a-z0-9_]*)$/.test(arg)) {
  console.error('usage: npm run db:migration -- <what_it_does> (snake_case), or -- --check');
  process.exit(2);
}

const db = await connectPglite({});
const change = await migrate(db)
  .then(() => compareSources(db))
  .finally(() => db.close());
if (change.orphans.length) {
  console.error(
    `No source in sql/functions/ creates ${change.orphans.join(', ')}. Add it to a source file, or, when no deployed ` +
      'release calls it any more, drop it in a migration of its own (npx drizzle-kit generate --custom --name drop_<name>).',
  );
  process.exit(1);
}
if (!change.statements.length) {
  console.log('sql/functions/ matches what the migrations create: nothing to write.');
  process.exit(0);
}
const names = [...new Set(change.changed.map((sig) => sig.slice(0, sig.indexOf('('))))].join(', ');
if (arg === '--check') {
  console.error(`sql/functions/ changes ${names}; no migration holds it: npm run db:migration -- <what_it_does>`);
  process.exit(1);
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
run('npx', ['drizzle-kit', 'generate', '--custom', '--name', arg]);
const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
const tag = journal.entries.at(-1)!.tag;
const header = `-- Written by \`npm run db:migration\` from sql/functions/: read the change there.\n`;
writeFileSync(join(MIGRATIONS_FOLDER, `${tag}.sql`), `${header}${change.statements.join(';\n--> statement-breakpoint\n')};\n`);
console.log(`wrote drizzle/${tag}.sql: ${names}`);
process.stdout.write(run('npm', ['run', '--silent', 'db:manifest']));
process.stdout.write(run('npm', ['run', '--silent', 'db:dump']));
