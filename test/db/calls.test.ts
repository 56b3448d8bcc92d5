// Every call from TypeScript into a queen.* function names its arguments (lib/db/named-args.ts),
// each name is a parameter of one overload of that function, and every parameter without a
// default is named. Read from the source text, so a call no other test runs is checked too.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { namedArgs } from '../../lib/db/named-args.js';
import { useDatabase } from '../support/db.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// Where calls from TypeScript live; test/ calls the functions positionally on purpose at times.
const SCANNED = ['lib', 'functions', 'cli', 'scripts', 'bench', 'server.ts'];
const UNREADABLE = '\u0000';
const RUN_TIME_NAME = 'names the function at run time';

function sources(path: string): string[] {
  if (path.endsWith('.ts')) return [path];
  return readdirSync(join(ROOT, path), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(path, e.name)) : e.name.endsWith('.ts') ? [join(path, e.name)] : [],
  );
}

interface SqlText {
  where: string;
  text: string;
}

/**
 * The SQL texts of one source file as they are at run time: string and template literals, with
 * `${…}` resolved where it is a const of the file or a namedArgs(…) of literals; anything else
 * reads as UNREADABLE.
 */
function sqlTexts(path: string): SqlText[] {
  const file = ts.createSourceFile(path, readFileSync(join(ROOT, path), 'utf8'), ts.ScriptTarget.ES2022, true);
  const consts = new Map<string, ts.Expression>();
  const texts: SqlText[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      ts.getCombinedNodeFlags(node) & ts.NodeFlags.Const
    ) {
      consts.set(node.name.text, node.initializer);
    }
    node.forEachChild(visit);
  };
  visit(file);
  const items = (node: ts.Expression): string[] => {
    const array = ts.isIdentifier(node) ? consts.get(node.text) : node;
    if (!array || !ts.isArrayLiteralExpression(array)) return [UNREADABLE];
    return array.elements.flatMap((e) => (ts.isSpreadElement(e) ? items(e.expression) : [textOf(e)]));
  };
  const textOf = (node: ts.Expression): string => {
    if (ts.isStringLiteralLike(node)) return node.text;
    if (ts.isTemplateExpression(node))
      return node.head.text + node.templateSpans.map((s) => textOf(s.expression) + s.literal.text).join('');
    if (ts.isParenthesizedExpression(node)) return textOf(node.expression);
    if (ts.isIdentifier(node)) return consts.has(node.text) ? textOf(consts.get(node.text)!) : UNREADABLE;
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'namedArgs') {
      return namedArgs(...node.arguments.flatMap((a) => (ts.isSpreadElement(a) ? items(a.expression) : [textOf(a)])));
    }
    return UNREADABLE;
  };
  const collect = (node: ts.Node): void => {
    if ((ts.isStringLiteralLike(node) || ts.isTemplateExpression(node)) && !ts.isTemplateSpan(node.parent)) {
      const text = textOf(node);
      if (text.includes('queen.')) {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart());
        texts.push({ where: `${path}:${line + 1}`, text });
      }
    }
    node.forEachChild(collect);
  };
  collect(file);
  return texts;
}

interface Call {
  where: string;
  fn: string;
  /** The names of the arguments passed by name. */
  names: string[];
  /** What makes the call unchecked: an argument passed by position, text the test cannot read. */
  errors: string[];
}

/** Each `queen.<name>(…)` in a SQL text, with its top-level arguments split. */
function callsIn({ where, text }: SqlText): Call[] {
  const calls: Call[] = [];
  for (const m of text.matchAll(/\bqueen\.(\w+|\u0000)\s*\(/g)) {
    // `INSERT INTO queen.t (…)` lists a table's columns.
    if (/\bINTO\s+$/i.test(text.slice(0, m.index))) continue;
    const args: string[] = [];
    let depth = 0;
    let arg = '';
    let quote: string | null = null;
    for (let i = m.index + m[0].length; i < text.length; i++) {
      const ch = text[i]!;
      if (quote) {
        if (ch === quote) quote = null;
      } else if (ch === "'" || ch === '"') quote = ch;
      else if (ch === '(' || ch === '[') depth++;
      else if ((ch === ')' || ch === ']') && depth > 0) depth--;
      else if (ch === ')' || (ch === ',' && depth === 0)) {
        args.push(arg.trim());
        arg = '';
        if (ch === ')') break;
        continue;
      }
      arg += ch;
    }
    const given = args.length === 1 && args[0] === '' ? [] : args;
    const errors: string[] = [];
    if (m[1] === UNREADABLE) errors.push(RUN_TIME_NAME);
    const names = given.flatMap((a) => {
      const named = /^(\w+)\s*=>/.exec(a);
      if (a.includes(UNREADABLE)) errors.push(`an argument this test cannot read (\`${a.replaceAll(UNREADABLE, '${…}')}\`)`);
      else if (!named) errors.push(`passes \`${a}\` by position`);
      return named ? [named[1]!] : [];
    });
    calls.push({ where, fn: m[1]!, names, errors });
  }
  return calls;
}

type Overload = {
  fn: string;
  signature: string;
  /** The input parameters' names, in order; null for one without a name. */
  params: (string | null)[];
  defaults: number;
};

const OVERLOADS_SQL = `
SELECT p.proname AS fn, p.oid::regprocedure::text AS signature, p.pronargdefaults AS defaults,
       COALESCE((SELECT array_agg(NULLIF(a.name, '') ORDER BY a.n)
                   FROM unnest(p.proargnames, COALESCE(p.proargmodes::text[], array_fill('i'::text, ARRAY[p.pronargs])))
                        WITH ORDINALITY AS a(name, mode, n)
                  WHERE a.mode IN ('i', 'b', 'v')),
                array_fill(NULL::text, ARRAY[p.pronargs])) AS params
  FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace`;

/** Why `call` fits none of its function's overloads, or fits more than one; null when it fits one. */
function misfit(call: Call, overloads: Overload[]): string | null {
  const own = overloads.filter((o) => o.fn === call.fn);
  const fits = own.filter((o) => {
    const required = o.params.slice(0, o.params.length - o.defaults);
    return call.names.every((n) => o.params.includes(n)) && required.every((p) => p !== null && call.names.includes(p));
  });
  if (fits.length === 1) return null;
  const shown = `queen.${call.fn}(${call.names.map((n) => `${n} =>`).join(', ')})`;
  const known = own.map((o) => `${o.signature}: ${o.params.map((p) => p ?? '(no name)').join(', ')}`).join('; ');
  return fits.length === 0
    ? `${shown} fits no overload (${known})`
    : `${shown} is ambiguous between ${fits.map((o) => o.signature).join(' and ')}`;
}

const db = useDatabase();

describe('calls into queen.* functions', () => {
  const calls = SCANNED.flatMap(sources).flatMap(sqlTexts).flatMap(callsIn);

  it('are found in the source, the hot paths among them', () => {
    expect(calls.map((c) => c.fn)).toEqual(
      expect.arrayContaining(['push_segments', 'pop', 'pop_shrink', 'ack', 'list_messages', 'delivery_settle']),
    );
    expect(
      calls
        .filter((c) => c.fn === 'ack')
        .map((c) => c.names.length)
        .sort((x, y) => x - y),
    ).toEqual([10, 19]);
  });

  it('name each argument after a parameter of exactly one overload, and every parameter without a default', async () => {
    const overloads = await db().query<Overload>(OVERLOADS_SQL);
    const [relations] = await db().query<{ names: string[] }>(
      `SELECT array_agg(relname::text) AS names FROM pg_class WHERE relnamespace = 'queen'::regnamespace`,
    );
    const problems = calls.flatMap((call) => {
      if (!overloads.some((o) => o.fn === call.fn) && !call.errors.includes(RUN_TIME_NAME)) {
        return relations!.names.includes(call.fn) ? [] : [`${call.where}: queen.${call.fn} is neither a function nor a table`];
      }
      if (call.errors.length > 0) return call.errors.map((e) => `${call.where}: queen.${call.fn.replace(UNREADABLE, '${…}')} ${e}`);
      const why = misfit(call, overloads);
      return why === null ? [] : [`${call.where}: ${why}`];
    });
    expect(problems).toEqual([]);
  });
});
