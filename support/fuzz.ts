// Fuzzed requests for every route an app registers: arbitrary JSON, and mutations of a valid
// request per route (a field replaced by an edge value, deleted, an inherited name added as a
// key, the body wrapped in an array, numbers JSON.stringify cannot write), so the fuzz gets past
// the first check of a parser and into its deep validation.
import fc from 'fast-check';
import type { Hono } from 'hono';
import type { Answer } from './http.js';
import { answerProblem } from './load.js';

export interface Route {
  method: string;
  path: string;
}

/** Every route of the app with a concrete method, once each (middleware is registered as ALL). */
export function routesOf(app: Hono<any>): Route[] {
  const seen = new Map<string, Route>();
  for (const r of app.routes) if (r.method !== 'ALL') seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  return [...seen.values()];
}

export const routeKey = (r: Route) => `${r.method} ${r.path}`;

/** A valid request for a route: its path parameters, query string and JSON body. */
export interface Example {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

export interface FuzzRequest {
  method: string;
  url: string;
  body?: string;
  /** How it was made, for the failure message. */
  how: string;
  /** The answer must be a 4xx: the body is not the JSON object the route takes. */
  mustRefuse: boolean;
}

/** A number written as this exact text, e.g. 1e400 (JSON.parse makes it Infinity). */
class NumberText {
  constructor(readonly text: string) {}
}

// JSON text of a value: own keys only, so an own "__proto__" key is written as sent.
function toText(v: unknown): string {
  if (v instanceof NumberText) return v.text;
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null';
  if (Array.isArray(v)) return `[${v.map(toText).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .map((k) => `${JSON.stringify(k)}:${toText((v as any)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** An object with these own keys, `__proto__` included, as JSON.parse would make it. */
function own(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

const INHERITED = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
const EDGE_NUMBERS = [
  0,
  -1,
  1,
  1.5,
  -0.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  -(2 ** 63),
  2 ** 64,
  1e30,
  1e308,
  -1e308,
  5e-324,
];
const NUMBER_TEXTS = ['1e400', '-1e400', '123456789012345678901234567890', '-0', '1E2', '0.1e1', '1.0'].map((t) => new NumberText(t));
const EDGE_STRINGS = [
  '',
  ' ',
  'x',
  ...INHERITED,
  'a/b',
  ' lead',
  'trail ',
  'a'.repeat(256),
  '\u0000',
  '\u007f',
  '😀',
  '9'.repeat(25),
  '-1',
  '0',
  '1.5',
  '1e308',
  'true',
  'null',
  '2026-13-45T99:99:99Z',
  '2026-02-30T12:00:00Z',
  '0000-01-01T00:00:00Z',
  '2026-01-31T12:00:00+16:00',
  '2026-01-31T12:00:00Z',
  '1900-01-01',
  '2100-01-01T00:00:00Z',
  'now',
  '00000000-0000-0000-0000-000000000000',
];
const EDGE_VALUES: unknown[] = [null, true, false, [], {}, [null], [{}], own([['__proto__', {}]]), own([['constructor', 1]])];

const anyEdge: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.constantFrom(...NUMBER_TEXTS),
  fc.constantFrom(...EDGE_STRINGS),
  fc.constantFrom(...EDGE_VALUES),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 20 }),
  fc.jsonValue({ maxDepth: 3 }),
);
const numberEdge = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBER_TEXTS) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: anyEdge },
);
const stringEdge = fc.oneof(fc.constantFrom(...EDGE_STRINGS), fc.string({ maxLength: 30 }), anyEdge);
const containerEdge = fc.oneof(fc.constantFrom(...EDGE_VALUES), anyEdge);

// Most replacements keep near the old value's type, where a parser's deeper checks live.
const edgeFor = (old: unknown) =>
  typeof old === 'number'
    ? numberEdge
    : typeof old === 'string'
      ? stringEdge
      : old !== null && typeof old === 'object'
        ? containerEdge
        : anyEdge;
const edgeKey = fc.oneof(fc.constantFrom(...INHERITED), fc.string({ maxLength: 12 }));
const edgeParam = fc.oneof(
  fc.constantFrom(...EDGE_STRINGS.filter((s) => s !== '')),
  fc.string({ minLength: 1, maxLength: 30 }),
  fc.nat().map(String),
);

type Path = (string | number)[];

function pathsOf(v: unknown, at: Path = []): Path[] {
  if (Array.isArray(v)) return [at, ...v.flatMap((x, i) => pathsOf(x, [...at, i]))];
  if (v !== null && typeof v === 'object' && !(v instanceof NumberText))
    return [at, ...Object.keys(v).flatMap((k) => pathsOf((v as any)[k], [...at, k]))];
  return [at];
}

const DELETE = Symbol('delete');

// A copy of `v` with the value at `path` replaced by f(old), or deleted when f answers DELETE.
function update(v: unknown, path: Path, f: (old: unknown) => unknown): unknown {
  if (path.length === 0) return f(v);
  const [head, ...rest] = path;
  if (Array.isArray(v)) {
    const copy = [...v];
    const next = update(copy[head as number], rest, f);
    if (next === DELETE) copy.splice(head as number, 1);
    else copy[head as number] = next;
    return copy;
  }
  const entries = Object.keys(v as object).flatMap((k): [string, unknown][] => {
    if (k !== head) return [[k, (v as any)[k]]];
    const next = update((v as any)[k], rest, f);
    return next === DELETE ? [] : [[k, next]];
  });
  return own(entries);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof NumberText);

function valueAt(v: unknown, path: Path): unknown {
  return path.reduce((x: any, k) => x?.[k], v);
}

/** One mutation of a JSON value: replace, delete or wrap a node, or add a key to an object node. */
function mutated(value: unknown): fc.Arbitrary<{ value: unknown; how: string }> {
  const paths = pathsOf(value);
  return fc.tuple(fc.nat(paths.length - 1), fc.constantFrom('replace', 'delete', 'add key', 'wrap')).chain(([i, op]) => {
    const path = paths[i]!;
    const old = valueAt(value, path);
    const at = path.join('.') || '(root)';
    return fc.tuple(edgeFor(old), edgeKey).map(([edge, key]) => {
      switch (op) {
        case 'replace':
          return { value: update(value, path, () => edge), how: `${at} = ${toText(edge).slice(0, 60)}` };
        case 'delete':
          return path.length === 0
            ? { value: undefined, how: 'no body' }
            : { value: update(value, path, () => DELETE), how: `delete ${at}` };
        case 'wrap':
          return { value: update(value, path, (o) => [o]), how: `wrap ${at} in []` };
        default:
          return {
            value: update(value, path, (o) => (isRecord(o) ? own([...Object.entries(o), [key, edge]]) : own([[key, o]]))),
            how: `add ${JSON.stringify(key)} at ${at}`,
          };
      }
    });
  });
}

const RAW_BODIES = [
  '',
  ' ',
  'null',
  '[]',
  '"x"',
  '1',
  '{',
  '{"a":1,}',
  '{"a":1}{',
  '\u0000',
  '['.repeat(600) + ']'.repeat(600),
  '{"__proto__":{"x":1}}',
];

/**
 * Requests for one route: valid examples, their mutations (body, query, path), other routes'
 * bodies mutated, and junk bodies. Where the route's valid body is an object, a body that is
 * valid JSON but not an object is marked `mustRefuse`.
 */
export function requestsFor(route: Route, examples: Example[], seedBodies: unknown[]): fc.Arbitrary<FuzzRequest> {
  const base = examples.length > 0 ? examples : [{ params: guessParams(route), body: route.method === 'GET' ? undefined : {} }];
  const foreign = seedBodies.length > 0 ? seedBodies : [{}];
  const build = (e: Example, body: unknown, how: string, bodyText?: string): FuzzRequest => {
    const text = bodyText ?? (body === undefined ? undefined : toText(body));
    const takesObject = examples.length > 0 && isRecord(e.body);
    return {
      method: route.method,
      url: exampleUrl(route, e),
      body: text,
      how,
      mustRefuse: takesObject && text !== undefined && !objectText(text),
    };
  };
  const example = fc.constantFrom(...base);
  const always = [
    { weight: 2, arbitrary: example.map((e) => build(e, e.body, 'valid example')) },
    {
      weight: 2,
      arbitrary: example.chain((e) =>
        mutated(e.query ?? {}).map((m) => build({ ...e, query: stringValues(m.value) }, e.body, `query: ${m.how}`)),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(example, edgeParam, fc.nat()).map(([e, p, pick]) => {
        const names = Object.keys({ ...guessParams(route), ...e.params });
        if (names.length === 0) return build(e, e.body, 'valid example');
        const name = names[pick % names.length]!;
        return build({ ...e, params: { ...e.params, [name]: p } }, e.body, `param ${name} = ${JSON.stringify(p).slice(0, 40)}`);
      }),
    },
  ];
  // A GET carries no body (fetch refuses one).
  if (route.method === 'GET' || route.method === 'HEAD') return fc.oneof(...always);
  return fc.oneof(
    ...always,
    { weight: 6, arbitrary: example.chain((e) => mutated(e.body ?? {}).map((m) => build(e, m.value, `body: ${m.how}`))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(example, fc.constantFrom(...foreign))
        .chain(([e, b]) => mutated(b).map((m) => build(e, m.value, `another route's body: ${m.how}`))),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(example, fc.jsonValue({ maxDepth: 4 }))
        .map(([e, b]) => build(e, b, `body: arbitrary JSON ${toText(b).slice(0, 60)}`)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(example, fc.constantFrom(...RAW_BODIES))
        .map(([e, t]) => build(e, undefined, `raw body ${JSON.stringify(t.slice(0, 30))}`, t)),
    },
  );
}

/** The path and query string of a request to `route` made from `e`. */
export function exampleUrl(route: Route, e: Example): string {
  const params = { ...guessParams(route), ...e.params };
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const qs = new URLSearchParams(Object.entries(e.query ?? {})).toString();
  return qs ? `${path}?${qs}` : path;
}

// Valid JSON that is not an object, or not JSON at all, is never a valid body for such a route;
// an empty body may be (lease extend, DLQ retry).
function objectText(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}

// A mutated query object back into name=value pairs (a nested value is sent as its JSON text).
function stringValues(v: unknown): Record<string, string> {
  if (!isRecord(v)) return { q: toText(v) };
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : toText(x)]));
}

// Routes added later may have parameters no example names: any name gets a plausible value.
function guessParams(route: Route): Record<string, string> {
  return Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => [name!, /id$/i.test(name!) ? '1' : 'fuzz']));
}

/**
 * Why an answer to a fuzzed request breaks docs/semantics.md#errors-and-availability, or null: no
 * answer, a 5xx (but 501 not_supported from a route documented to answer it, and 503
 * database_unavailable where the database may be away), or a 4xx without {error, code} strings.
 */
export function fuzzProblem(answer: Answer, options: { notSupported?: boolean; databaseMayBeAway?: boolean } = {}): string | null {
  if (answer.status === 0) return `no answer (${answer.error})`;
  if (answer.status === 501 && options.notSupported && codeOf(answer) === 'not_supported') return null;
  if (answer.status === 503 && !options.databaseMayBeAway) return `503 ${answer.text.slice(0, 300)}`;
  return answerProblem(answer);
}

function codeOf(answer: Answer): unknown {
  try {
    return JSON.parse(answer.text).code;
  } catch {
    return undefined;
  }
}
