// Request bodies and fields: size-capped, JSON-parsed, checked with errors that say what to fix.
import type { Context } from 'hono';
import * as v from 'valibot';
import { badRequest, tooLarge } from '../../errors.js';
import type { BrokerEnv } from '../context.js';

export async function readText(c: Context<BrokerEnv>): Promise<string> {
  const limit = c.get('config').maxBodyBytes;
  const declared = Number(c.req.header('content-length') ?? NaN);
  if (declared > limit) throw bodyTooLarge(limit);
  const incoming = nodeIncoming(c.env);
  if (incoming) return readIncoming(incoming, limit);
  const text = await c.req.text();
  if (text.length > limit && new TextEncoder().encode(text).byteLength > limit) throw bodyTooLarge(limit);
  return text;
}

// On Node (@hono/node-server passes the IncomingMessage as env.incoming) the body is read from the
// socket's chunks: c.req.text() would build a web Request and a ReadableStream around them first,
// ~10% of a small push's server CPU. Elsewhere (Lambda, Workers) env has no such stream.
interface Incoming {
  on(event: 'data', fn: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'error', fn: (err?: Error) => void): unknown;
  readableEnded: boolean;
}
const nodeIncoming = (env: unknown): Incoming | null => {
  const incoming = (env as { incoming?: Incoming } | undefined)?.incoming;
  return incoming && typeof incoming.on === 'function' && incoming.readableEnded === false ? incoming : null;
};
const utf8 = new TextDecoder();

function readIncoming(incoming: Incoming, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    incoming.on('data', (chunk) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    incoming.on('error', reject);
    incoming.on('end', () => {
      if (size > limit) return reject(bodyTooLarge(limit));
      if (chunks.length === 1) return resolve(utf8.decode(chunks[0]));
      const all = new Uint8Array(size);
      let at = 0;
      for (const ch of chunks) {
        all.set(ch, at);
        at += ch.length;
      }
      resolve(utf8.decode(all));
    });
  });
}

const bodyTooLarge = (limit: number) =>
  tooLarge('body_too_large', `Request body exceeds ${limit} bytes (QUEEN_MAX_BODY_BYTES); send fewer items per request.`);

export function parseJson(text: string, allowEmpty = false): unknown {
  if (allowEmpty && text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('invalid_json', 'Request body is not valid JSON; send a JSON object with Content-Type: application/json.');
  }
}

export async function readJson(c: Context<BrokerEnv>, allowEmpty = false): Promise<unknown> {
  return parseJson(await readText(c), allowEmpty);
}

/** A JSON object: not an array, not null. JSON.parse gives it own keys only ("__proto__" too). */
export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** `x` as a JSON object, or a 400 with `message` (an array is not an object here). */
export function requireObject(x: unknown, message: string, code = 'invalid_request'): Record<string, unknown> {
  if (!isObject(x)) throw badRequest(code, message);
  return x;
}

/** A nested JSON object in a schema; valibot's own object() and record() accept arrays. */
export const objectSchema = (message: string) => v.custom<Record<string, unknown>>(isObject, message);

/** `table[key]` only when it is the table's own entry: a client's "constructor" names nothing. */
export const ownEntry = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

/**
 * A JSON number that is a whole number in [min, max], the field's range from lib/broker/limits.ts;
 * the range lies within the safe integers, so what passes is exact in JavaScript and in SQL.
 */
export function wholeNumberSchema(what: string, min: number, max: number) {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max)) throw new Error(`${what}: a range must lie within the safe integers`);
  return v.pipe(
    v.number(`${what} must be a number`),
    v.integer(`${what} must be a whole number`),
    v.minValue(min, `${what} must be at least ${min}`),
    v.maxValue(max, `${what} must be at most ${max}`),
  );
}

/** A string PostgreSQL text can hold (no U+0000), e.g. an ack's error message or a leaseId. */
export const textSchema = (what: string) =>
  v.pipe(
    v.string(`${what} must be a string`),
    v.check((s) => !s.includes('\u0000'), `${what} must not contain U+0000`),
  );

/** A whole number in [min, max] sent as text (a query string, a path): digits, an optional minus. */
export const wholeNumberTextSchema = (what: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^-?\d{1,20}$/, `${what} must be a whole number from ${min} to ${max}`),
    v.transform(Number),
    wholeNumberSchema(what, min, max),
  );

/**
 * Validates with valibot; the first issue becomes a 400 naming the field's path, prefixed by
 * `at` (e.g. `items[3]`) when the value sits inside a larger body.
 */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown, code = 'invalid_request', at?: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0]!;
  const field = v.getDotPath(issue);
  const path = at === undefined ? field : `${at}${field ? `.${field}` : ''}`;
  throw badRequest(code, path ? `${path}: ${issue.message}` : issue.message);
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?)?$/;

// Date.parse rolls 2026-02-30 over to March and takes year 0000 and offsets up to ±23:59, where
// PostgreSQL refuses them (it has no year 0, and its offsets stop at ±15:59): so each field is
// checked against PostgreSQL's range too.
function isTimestamp(s: string): boolean {
  const m = ISO.exec(s);
  if (!m) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHour = 0, offsetMinute = 0] = m
    .slice(1)
    .map((x) => (x === undefined ? undefined : Number(x)));
  const leap = year! % 4 === 0 && (year! % 100 !== 0 || year! % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month!) ? 30 : 31;
  if (Number.isNaN(Date.parse(s))) return false;
  return (
    year! >= 1 &&
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHour <= 15 &&
    offsetMinute <= 59
  );
}

/** An ISO 8601 date or date-time string PostgreSQL will parse the same way. */
export const timestampSchema = (what: string) =>
  v.pipe(
    v.string(`${what} must be an ISO 8601 string`),
    v.check(isTimestamp, `${what} must be an ISO 8601 date-time like 2026-01-31T12:00:00Z`),
  );

/** A listing's `from` and `to` query parameters, to spread into its query schema. */
export const windowParams = {
  from: v.optional(timestampSchema('from')),
  to: v.optional(timestampSchema('to')),
};

/** A listing's `limit` (1..maxLimit) and `offset` (0..maxOffset) query parameters, to spread likewise. */
export const pageParams = (maxLimit: number, defaultLimit: number, maxOffset: number) => ({
  limit: v.optional(wholeNumberTextSchema('limit', 1, maxLimit), String(defaultLimit)),
  offset: v.optional(wholeNumberTextSchema('offset', 0, maxOffset), '0'),
});

/** The query string without its empty parameters, which count as absent. */
export const presentQuery = (query: Record<string, string>) =>
  Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));

/** A partition id as push and pop return it: a positive integer, sent as a string or a number. */
export function parsePartitionId(raw: unknown): string {
  const id = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw;
  if (typeof id !== 'string' || !/^[1-9]\d{0,17}$/.test(id)) {
    throw badRequest('invalid_partition_id', 'partitionId must be the numeric id a push or pop returned (partitionId / partition_id).');
  }
  return id;
}

/** A boolean in a query string: true/1 or false/0. */
export const flag = (what: string) =>
  v.pipe(
    v.picklist(['true', 'false', '1', '0'], `${what} must be true or false`),
    v.transform((x) => x === 'true' || x === '1'),
  );
