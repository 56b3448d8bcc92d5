// lib/db/rows.ts against the functions it types (its FunctionRows): the columns each function
// returns, read from the catalog that pg_get_function_result renders, are exactly the columns its
// row type declares, each with the type the driver hands back. Read with the TypeScript compiler,
// so a column added, renamed or retyped on either side fails here by name (on PGlite in `npm test`,
// on PostgreSQL in `npm run test:pg`).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { useDatabase } from '../support/db.js';

const ROWS = resolve(dirname(fileURLToPath(import.meta.url)), '../../lib/db/rows.ts');

// jsonb arrives parsed, as whatever value it holds; its shape is the function's to document.
const JSON_VALUE = 'a JSON value';

// What the drivers hand back for each PostgreSQL type a row may hold (lib/db/types.ts, and the
// parsers in lib/db/driver-pglite.ts; node-postgres and Neon do this by default), and a value of it
// to check that on the driver the suite runs. Nullability is left out on both sides: a function's
// result columns carry no NOT NULL, so null is the row type's to declare.
const TYPES: { pg: string; ts: string; sample: string }[] = [
  { pg: 'text', ts: 'string', sample: `'a'` },
  { pg: 'uuid', ts: 'string', sample: `'0190a0a0-0000-7000-8000-000000000000'::uuid` },
  { pg: 'bigint', ts: 'string', sample: '9007199254740993::bigint' },
  { pg: 'numeric', ts: 'string', sample: '1.5::numeric' },
  { pg: 'integer', ts: 'number', sample: '1::integer' },
  { pg: 'smallint', ts: 'number', sample: '1::smallint' },
  { pg: 'boolean', ts: 'boolean', sample: 'true' },
  { pg: 'bytea', ts: 'Uint8Array', sample: `'\\x0102'::bytea` },
  { pg: 'timestamp with time zone', ts: 'Date', sample: 'now()' },
  { pg: 'text[]', ts: 'string[]', sample: `ARRAY['a']` },
  { pg: 'bigint[]', ts: 'string[]', sample: 'ARRAY[9007199254740993::bigint]' },
  { pg: 'integer[]', ts: 'number[]', sample: 'ARRAY[1]' },
  { pg: 'jsonb', ts: JSON_VALUE, sample: `'{"a":[1]}'::jsonb` },
];
const TS_OF_PG = new Map(TYPES.map((t) => [t.pg, t.ts]));

function hasType(value: unknown, type: string): boolean {
  if (type.endsWith('[]')) return Array.isArray(value) && value.every((v) => hasType(v, type.slice(0, -2)));
  if (type === 'Date') return value instanceof Date;
  if (type === 'Uint8Array') return value instanceof Uint8Array;
  if (type === JSON_VALUE) return typeof value === 'object' && value !== null;
  return typeof value === type;
}

interface DeclaredRow {
  fn: string;
  /** The row type as FunctionRows names it, e.g. PopRow. */
  typeName: string;
  /** column → its TypeScript types across the union's variants, without null, literals widened. */
  columns: Map<string, string>;
}

function declaredRows(): DeclaredRow[] {
  const program = ts.createProgram([ROWS], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: [],
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(ROWS)!)!);
  const map = exports.find((s) => s.name === 'FunctionRows');
  if (!map) throw new Error('lib/db/rows.ts exports no FunctionRows');
  const widen = (t: ts.Type): string | null => {
    if (t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) return null;
    if (t.flags & ts.TypeFlags.StringLiteral) return 'string';
    if (t.flags & ts.TypeFlags.NumberLiteral) return 'number';
    if (t.flags & ts.TypeFlags.BooleanLiteral) return 'boolean';
    return checker.typeToString(t).replace(/^Uint8Array<\w+>$/, 'Uint8Array');
  };
  return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(map)).map((fn) => {
    const row = checker.getTypeOfSymbol(fn);
    const columns = new Map<string, Set<string>>();
    for (const variant of row.isUnion() ? row.types : [row]) {
      for (const column of checker.getPropertiesOfType(variant)) {
        const types = columns.get(column.name) ?? new Set<string>();
        const type = checker.getTypeOfSymbol(column);
        for (const part of type.isUnion() ? type.types : [type]) {
          const name = widen(part);
          if (name !== null) types.add(name);
        }
        columns.set(column.name, types);
      }
    }
    const declaration = fn.valueDeclaration;
    const typeName = declaration && ts.isPropertySignature(declaration) && declaration.type ? declaration.type.getText() : fn.name;
    return { fn: fn.name, typeName, columns: new Map([...columns].map(([c, t]) => [c, [...t].sort().join(' | ') || 'null'])) };
  });
}

type FunctionResult = {
  fn: string;
  signature: string;
  result: string;
  columns: { name: string; type: string }[];
};

// The result columns: a RETURNS TABLE's (OUT) columns, or a returned composite type's attributes,
// which pg_get_function_result names without listing (SETOF queen.ack_row).
const RESULTS_SQL = `
SELECT p.proname AS fn, p.oid::regprocedure::text AS signature, pg_get_function_result(p.oid) AS result,
       COALESCE(
         (SELECT json_agg(json_build_object('name', a.name, 'type', format_type(a.type, NULL)) ORDER BY a.n)
            FROM unnest(p.proallargtypes, p.proargmodes::text[], p.proargnames) WITH ORDINALITY AS a(type, mode, name, n)
           WHERE a.mode IN ('o', 'b', 't')),
         (SELECT json_agg(json_build_object('name', c.attname, 'type', format_type(c.atttypid, c.atttypmod)) ORDER BY c.attnum)
            FROM pg_type t JOIN pg_attribute c ON c.attrelid = t.typrelid
           WHERE t.oid = p.prorettype AND c.attnum > 0 AND NOT c.attisdropped),
         '[]') AS columns
  FROM pg_proc p
 WHERE p.pronamespace = 'queen'::regnamespace AND p.proname = ANY($1::text[])
 ORDER BY 2`;

/** What is wrong between one overload of a function (named `fn` in the messages) and the row type FunctionRows gives it. */
function mismatches(row: DeclaredRow, f: FunctionResult, fn: string): string[] {
  const problems: string[] = [];
  const returned = new Set(f.columns.map((c) => c.name));
  for (const c of f.columns) {
    const declared = row.columns.get(c.name);
    const expected = TS_OF_PG.get(c.type);
    if (declared === undefined) problems.push(`${fn} returns ${c.name} ${c.type}, which ${row.typeName} does not declare`);
    else if (expected === undefined)
      problems.push(`${fn} returns ${c.name} ${c.type}: add what the drivers hand back for ${c.type} to TYPES`);
    else if (expected !== JSON_VALUE && declared !== expected) {
      problems.push(`${fn} returns ${c.name} ${c.type}, which arrives as ${expected}; ${row.typeName} declares ${c.name}: ${declared}`);
    }
  }
  for (const name of row.columns.keys()) {
    if (!returned.has(name)) problems.push(`${row.typeName} declares ${name}, which ${fn} does not return`);
  }
  return problems;
}

const db = useDatabase();

describe('lib/db/rows.ts against the functions it types', () => {
  it('maps each PostgreSQL type to what the driver really hands back', async () => {
    const [row] = await db().query(`SELECT ${TYPES.map((t, i) => `${t.sample} AS c${i}`).join(', ')}`);
    const wrong = TYPES.flatMap((t, i) =>
      hasType(row![`c${i}`], t.ts) ? [] : [`${t.pg} arrives as ${JSON.stringify(row![`c${i}`])}, not ${t.ts}`],
    );
    expect(wrong, `on ${db().driver}`).toEqual([]);
    expect(row!.c2, 'int8 keeps every digit').toBe('9007199254740993');
  });

  it('declares exactly the columns each function returns, with the types the driver hands back', async () => {
    const rows = declaredRows();
    expect(rows.map((r) => r.fn)).toEqual(expect.arrayContaining(['push_segments', 'pop', 'ack', 'message_marks', 'list_messages']));
    const results = await db().query<FunctionResult>(RESULTS_SQL, [rows.map((r) => r.fn)]);
    const wrong: FunctionResult[] = [];
    const problems = rows.flatMap((row) => {
      const overloads = results.filter((f) => f.fn === row.fn);
      if (overloads.length === 0) return [`FunctionRows types queen.${row.fn}, which the database does not have`];
      return overloads.flatMap((f) => {
        const found = mismatches(row, f, overloads.length === 1 ? `queen.${f.fn}` : f.signature);
        if (found.length > 0) wrong.push(f);
        return found;
      });
    });
    expect(problems, wrong.map((f) => `${f.signature} returns ${f.result}`).join('\n')).toEqual([]);
  });
});
