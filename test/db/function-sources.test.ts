// sql/functions/ is the SQL a contributor edits; drizzle/ migrations are written from it by
// `npm run db:migration`. A freshly migrated database must hold exactly what the sources say, and
// the comparison must name what a changed source would make a migration write.
import { describe, expect, it } from 'vitest';
import {
  compareSources,
  parseSource,
  readSources,
  splitStatements,
  sqlComment,
  type FunctionSource,
} from '../../lib/db/function-sources.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const sources = readSources();
const named = (name: string) => sources.find((s) => s.name === name)!;
/** The sources with one function's CREATE rewritten, parsed again as the file would be. */
const rewrite = (source: FunctionSource, edit: (create: string) => string): FunctionSource[] => {
  const create = edit(source.create);
  expect(create).not.toBe(source.create);
  return sources.map((s) => (s === source ? parseSource(s.file, `${sqlComment(s.comment)}\n${create};`)[0]! : s));
};

describe('the SQL function sources (sql/functions/)', () => {
  it('are what a freshly migrated database holds, function by function, comments included', async () => {
    const change = await compareSources(db());
    expect(change.orphans, 'functions the migrations create that no source in sql/functions/ holds').toEqual([]);
    expect(change.changed, 'sql/functions/ differs from the migrations: run `npm run db:migration -- <what_it_does>`').toEqual([]);
    expect(change.statements).toEqual([]);
  });

  it('give every function of the queen schema exactly one source', async () => {
    const [{ n }] = (await db().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_proc WHERE pronamespace = 'queen'::regnamespace`,
    )) as [{ n: number }];
    expect(sources).toHaveLength(n);
    expect(sources.filter((s) => !s.comment).map((s) => s.name)).toEqual([]);
  });

  it('turn a change of the retry back-off into that one short CREATE, and leave the database as it was', async () => {
    // An exponential back-off: one line of sql/functions/policy.sql.
    const edited = rewrite(named('retry_not_before'), (c) =>
      c.replace(
        'make_interval(secs => p_retry_delay_ms / 1000.0)',
        'make_interval(secs => p_retry_delay_ms * 2 ^ (p_retries - 1) / 1000.0)',
      ),
    );
    const change = await compareSources(db(), edited);
    expect(change.changed).toEqual(['queen.retry_not_before(timestamp with time zone,integer,integer)']);
    expect(change.statements).toHaveLength(1);
    expect(change.statements[0]).toMatch(/^-- [^\n]*\n(--[^\n]*\n)*CREATE OR REPLACE FUNCTION queen\.retry_not_before\(/);
    expect(change.statements[0]).toContain('2 ^ (p_retries - 1)');
    expect(change.statements[0]!.split('\n').length).toBeLessThan(20);
    // Nothing stayed behind: the sources still match.
    expect((await compareSources(db())).changed).toEqual([]);
  });

  it('turn a changed comment into a COMMENT alone', async () => {
    const source = named('cursor_start');
    const edited = sources.map((s) => (s === source ? { ...s, comment: `${s.comment}\nIt's a backward step.` } : s));
    const change = await compareSources(db(), edited);
    expect(change.statements).toEqual([
      expect.stringMatching(
        /^COMMENT ON FUNCTION queen\.cursor_start\(bigint, ?timestamp with time zone\) IS '.*It''s a backward step\.'$/s,
      ),
    ]);
  });

  it('drop first what CREATE OR REPLACE cannot change, and create a new helper before the function that calls it', async () => {
    const source = named('admin_iso');
    // Renaming an argument is what CREATE OR REPLACE refuses (42P13).
    const renamed = rewrite(source, (c) => c.replace('admin_iso(t timestamp', 'admin_iso(p_t timestamp').replace(/\(t AT/g, '(p_t AT'));
    const helper = parseSource(
      'sql/functions/policy.sql',
      `-- A new helper.\nCREATE OR REPLACE FUNCTION queen.zz_helper() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;`,
    )[0]!;
    const caller = parseSource(
      'caller.sql',
      `-- Calls the helper.\nCREATE OR REPLACE FUNCTION queen.aa_caller() RETURNS int LANGUAGE sql AS $$ SELECT queen.zz_helper() $$;`,
    )[0]!;
    const change = await compareSources(db(), [caller, ...renamed, helper]);
    const drop = change.statements.findIndex((s) => s.startsWith('DROP FUNCTION queen.admin_iso('));
    expect(drop).toBeGreaterThanOrEqual(0);
    expect(change.statements[drop + 1]).toContain('admin_iso(p_t timestamp with time zone)');
    expect(change.statements[drop + 2]).toMatch(/^COMMENT ON FUNCTION queen\.admin_iso\(timestamp with time zone\) IS /);
    expect(change.statements).toContain(`COMMENT ON FUNCTION queen.zz_helper() IS 'A new helper.'`);
    const order = change.statements.filter((s) => /CREATE OR REPLACE FUNCTION queen\.(zz_helper|aa_caller)/.test(s));
    expect(order.map((s) => /queen\.(\w+)/.exec(s.slice(s.indexOf('CREATE')))![1])).toEqual(['zz_helper', 'aa_caller']);
  });

  it('name a function the database has and no source creates', async () => {
    const change = await compareSources(
      db(),
      sources.filter((s) => s.name !== 'serverless_note'),
    );
    expect(change.orphans).toEqual(['queen.serverless_note()']);
  });
});

describe('splitting SQL into statements', () => {
  it('splits at top-level semicolons only, keeping each statement its comments', () => {
    const text = [
      '-- one; with a semicolon in a comment',
      "CREATE FUNCTION a() AS $$ SELECT ';'; $$;",
      '',
      "/* b; */ SELECT 'it''s; fine', \"we;ird\", $tag$ ; $$ ; $tag$;",
      '-- trailing comment only',
    ].join('\n');
    expect(splitStatements(text)).toEqual([
      "-- one; with a semicolon in a comment\nCREATE FUNCTION a() AS $$ SELECT ';'; $$",
      "/* b; */ SELECT 'it''s; fine', \"we;ird\", $tag$ ; $$ ; $tag$",
    ]);
  });

  it('refuses an unterminated dollar quote rather than guessing', () => {
    expect(() => splitStatements('SELECT $x$ never closed')).toThrow(/unterminated dollar quote \$x\$/);
  });

  it('reads a function comment as the block touching its CREATE, not a file header above a blank line', () => {
    const [fn] = parseSource(
      'x.sql',
      '-- File header.\n\n-- Why this function.\n--   indented detail\n--\n-- More.\nCREATE OR REPLACE FUNCTION queen.x() RETURNS int LANGUAGE sql AS $f$ SELECT 1 $f$;',
    );
    expect(fn!.comment).toBe('Why this function.\n  indented detail\n\nMore.');
    expect(fn!.body).toBe(' SELECT 1 ');
  });
});
