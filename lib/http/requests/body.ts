// Request bodies and fields: size-capped, JSON-parsed, checked with errors that say what to fix.
import type { Context } from 'hono';
import * as v from 'valibot';
import { badRequest, tooLarge } from '../../errors.js';
import type { BrokerEnv } from '../context.js';

export async function readText(c: Context<BrokerEnv>): Promise<string> {
  const limit = c.get('config').maxBodyBytes;
  const declared = Number(c.req.header('content-length') ?? NaN);
  if (declared > limit) throw bodyTooLarge(limit);
  const text = await c.req.text();
  if (text.length > limit && new TextEncoder().encode(text).byteLength > limit) throw bodyTooLarge(limit);
  return text;
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

export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

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

const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;

/** An ISO 8601 date or date-time string PostgreSQL will parse the same way. */
export const timestampSchema = (what: string) =>
  v.pipe(
    v.string(`${what} must be an ISO 8601 string`),
    v.check((s) => ISO.test(s) && !Number.isNaN(Date.parse(s)), `${what} must be an ISO 8601 date-time like 2026-01-31T12:00:00Z`),
  );

/** A whole number in a query string, within [min, max]. */
export const queryInteger = (what: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${what} must be a whole number`),
    v.transform(Number),
    v.minValue(min, `${what} must be at least ${min}`),
    v.maxValue(max, `${what} must be at most ${max}`),
  );
