// The queen schema's SQL functions as source files (sql/functions/*.sql, one function or a small
// family each), and what a migration must run to bring a database to them. The sources are what a
// contributor edits and a reviewer reads; drizzle/ migrations stay the only thing that changes a
// database, written from the sources by `npm run db:migration` (scripts/db-migration.ts), and
// test/db/function-sources.test.ts fails when a freshly migrated database differs from them.
//
// A function's reasoning is the `--` block directly above its CREATE: it is kept in the source, and
// stored as the function's COMMENT, so docs/schema.sql and psql's \df+ show it too.
// Node only (it reads files); deployed functions never run it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database, Queryable } from './types.js';

export const FUNCTIONS_FOLDER = fileURLToPath(new URL('../../sql/functions', import.meta.url));

export interface FunctionSource {
  /** The source file, relative to the repository (sql/functions/pop.sql). */
  file: string;
  name: string;
  /** The CREATE statement, without its comment block or its terminating semicolon. */
  create: string;
  /** The `--` block above the CREATE, without the dashes: the function's COMMENT. */
  comment: string;
  /** The body between the dollar quotes, as pg_proc.prosrc holds it. */
  body: string;
}

/** One function as a database holds it. */
export interface FunctionState {
  def: string;
  comment: string | null;
}

export interface SourceChange {
  /** Statements bringing the database to the sources, in an order that runs. */
  statements: string[];
  /** Signatures (queen.pop(text, …)) whose definition or comment differs, new ones included. */
  changed: string[];
  /** Functions the database has that no source creates. */
  orphans: string[];
}

/**
 * Splits SQL text into statements at top-level semicolons: quotes, quoted identifiers, dollar
 * quotes and comments are skipped over. Each statement keeps the comments before it.
 */
export function splitStatements(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      for (;;) {
        const k = text.indexOf(c, j);
        if (k < 0) throw new Error(`unterminated ${c === "'" ? 'string' : 'identifier'} at offset ${i}`);
        if (text[k + 1] === c) j = k + 2;
        else {
          i = k + 1;
          break;
        }
      }
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i))?.[0];
      if (!tag) {
        i++;
        continue;
      }
      const end = text.indexOf(tag, i + tag.length);
      if (end < 0) throw new Error(`unterminated dollar quote ${tag} at offset ${i}`);
      i = end + tag.length;
    } else if (c === ';') {
      out.push(text.slice(start, i));
      i++;
      start = i;
    } else i++;
  }
  if (
    text
      .slice(start)
      .replace(/--[^\n]*/g, '')
      .trim()
  )
    out.push(text.slice(start));
  return out.map((s) => s.replace(/^\s*\n/, '').trimEnd()).filter((s) => s.replace(/--[^\n]*/g, '').trim());
}

const CREATE = /^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+queen\.([a-z_][a-z0-9_]*)\s*\(/i;

/** Parses one source file's text; every statement must create one function in the queen schema. */
export function parseSource(file: string, text: string): FunctionSource[] {
  return splitStatements(text).map((statement) => {
    const lines = statement.split('\n');
    const at = lines.findIndex((l) => l.trim() !== '' && !l.startsWith('--'));
    const create = lines.slice(at).join('\n');
    const name = CREATE.exec(create)?.[1];
    if (!name) throw new Error(`${file}: each statement must be one CREATE FUNCTION queen.<name>(…); found: ${create.slice(0, 80)}`);
    // Only the block touching the CREATE is the function's: a file's header stands apart by a blank line.
    const block = lines.slice(0, at);
    const blank = block.lastIndexOf('');
    const comment = block
      .slice(blank + 1)
      .map((l) => l.replace(/^-- ?/, ''))
      .join('\n');
    const quote = /\bAS\s+(\$[A-Za-z_]*\$)/i.exec(create);
    if (!quote) throw new Error(`${file}: queen.${name} has no dollar-quoted body`);
    const from = quote.index + quote[0].length;
    const body = create.slice(from, create.indexOf(quote[1]!, from));
    return { file, name, create, comment, body };
  });
}

/** Every source under folder, files in name order, functions in file order. */
export function readSources(folder = FUNCTIONS_FOLDER): FunctionSource[] {
  return readdirSync(folder)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .flatMap((f) => parseSource(`sql/functions/${f}`, readFileSync(join(folder, f), 'utf8')));
}

/** The queen schema's functions, by signature, as the catalog renders them. */
export async function snapshotFunctions(db: Queryable): Promise<Map<string, FunctionState>> {
  const rows = await db.query<{ sig: string; def: string; comment: string | null }>(
    `SELECT p.oid::regprocedure::text AS sig, pg_get_functiondef(p.oid) AS def, obj_description(p.oid, 'pg_proc') AS comment
       FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace ORDER BY 1`,
  );
  return new Map(rows.map((r) => [r.sig, { def: r.def, comment: r.comment }]));
}

/** Text as `--` comment lines, as a source file holds it. */
export function sqlComment(text: string): string {
  return text.replace(/^/gm, '-- ').replace(/ +$/gm, '');
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;
const commentOn = (sig: string, comment: string) => `COMMENT ON FUNCTION ${sig} IS ${comment ? literal(comment) : 'NULL'}`;

/**
 * Runs the sources against db inside a transaction it rolls back, and returns the statements a
 * migration needs to make db match them: a CREATE (after a DROP where the result type or argument
 * names changed, which CREATE OR REPLACE refuses) for each changed definition, a COMMENT for each
 * new function and changed comment. db is left as it was.
 */
export async function compareSources(db: Database, sources: FunctionSource[] = readSources()): Promise<SourceChange> {
  const rollback = new Error('rollback');
  let change: SourceChange | undefined;
  await db
    .transaction(async (tx) => {
      const before = await snapshotFunctions(tx);
      const made: { source: FunctionSource; sig: string; drop?: string }[] = [];
      // A SQL-language function is checked against what it calls: retry what failed until nothing moves.
      let pending = sources;
      while (pending.length) {
        const failed: { source: FunctionSource; error: unknown }[] = [];
        for (const source of pending) {
          try {
            made.push(await createFunction(tx, source));
          } catch (error) {
            failed.push({ source, error });
          }
        }
        if (failed.length === pending.length) {
          const { source, error } = failed[0]!;
          throw new Error(`${source.file}: queen.${source.name}: ${(error as Error).message}`);
        }
        pending = failed.map((f) => f.source);
      }
      for (const m of made) await tx.query(commentOn(m.sig, m.source.comment));
      const after = await snapshotFunctions(tx);
      const statements: string[] = [];
      const changed: string[] = [];
      for (const m of made) {
        const was = before.get(m.sig);
        const now = after.get(m.sig)!;
        const defChanged = was?.def !== now.def;
        if (defChanged) statements.push(...(m.drop ? [`DROP FUNCTION ${m.drop}`] : []), withComment(m.source));
        // CREATE OR REPLACE keeps a function's comment: a COMMENT only where the comment is new.
        const commentChanged = !was || m.drop !== undefined || (was.comment ?? '') !== (now.comment ?? '');
        if (commentChanged) statements.push(commentOn(m.sig, m.source.comment));
        if (defChanged || commentChanged) changed.push(m.sig);
      }
      const createdSigs = new Set(made.map((m) => m.sig));
      const dropped = new Set(made.flatMap((m) => (m.drop ? [m.drop] : [])));
      const orphans = [...after.keys()].filter((sig) => !createdSigs.has(sig) && !dropped.has(sig));
      change = { statements, changed, orphans };
      throw rollback;
    })
    .catch((e: unknown) => {
      if (e !== rollback) throw e;
    });
  return change!;
}

const withComment = (s: FunctionSource) => (s.comment ? `${sqlComment(s.comment)}\n` : '') + s.create;

/** Creates one source's function in a savepoint; returns its signature (and what it had to drop). */
async function createFunction(tx: Queryable, source: FunctionSource): Promise<{ source: FunctionSource; sig: string; drop?: string }> {
  await tx.query('SAVEPOINT fn');
  try {
    await tx.query(source.create);
    await tx.query('RELEASE SAVEPOINT fn');
    return { source, sig: await signatureOf(tx, source) };
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT fn');
    // 42P13: CREATE OR REPLACE cannot change a result type or argument names; find the one it replaces.
    if ((error as { code?: string }).code !== '42P13') throw error;
    const overloads = await tx.query<{ sig: string }>(
      `SELECT p.oid::regprocedure::text AS sig FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace AND p.proname = $1`,
      [source.name],
    );
    for (const { sig } of overloads) {
      await tx.query('SAVEPOINT fn');
      try {
        await tx.query(`DROP FUNCTION ${sig}`);
        await tx.query(source.create);
        const made = await signatureOf(tx, source);
        if (made === sig) {
          await tx.query('RELEASE SAVEPOINT fn');
          return { source, sig, drop: sig };
        }
      } catch {
        // not this overload
      }
      await tx.query('ROLLBACK TO SAVEPOINT fn');
    }
    throw error;
  }
}

async function signatureOf(tx: Queryable, source: FunctionSource): Promise<string> {
  const rows = await tx.query<{ sig: string }>(
    `SELECT p.oid::regprocedure::text AS sig FROM pg_proc p
      WHERE p.pronamespace = 'queen'::regnamespace AND p.proname = $1 AND p.prosrc = $2`,
    [source.name, source.body],
  );
  if (rows.length !== 1) throw new Error(`${source.file}: ${rows.length} functions queen.${source.name} have this body; give each its own`);
  return rows[0]!.sig;
}
