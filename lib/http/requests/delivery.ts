// The subscription routes and DLQ redrive (docs/delivery.md, docs/api.md#subscriptions): bodies
// checked field by field, every number against its range, an unknown key refused with the nearest known one.
import type { Context } from 'hono';
import * as v from 'valibot';
import {
  DEFAULT_ATTEMPT_PAGE,
  DEFAULT_REDRIVE_LIMIT,
  MAX_ATTEMPT_PAGE,
  MAX_HEADER_VALUE_LENGTH,
  MAX_HEADERS,
  MAX_REDRIVE_LIMIT,
  MAX_URL_LENGTH,
  OPTION_RANGES,
  RESERVED_HEADERS,
  type NewSubscription,
  type SubscriptionChange,
  type SubscriptionOptions,
} from '../../broker/delivery/subscriptions.js';
import type { RedriveFilter } from '../../broker/redrive.js';
import { nameSchema } from '../../broker/names.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { isObject, presentQuery, readJson, validate, wholeNumberSchema, wholeNumberTextSchema, windowParams } from './body.js';
import { checkKeys, keySet } from './keys.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space and tab: what every runtime's Headers accepts as a value.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

const urlSchema = v.pipe(
  v.string('url must be a string'),
  v.maxLength(MAX_URL_LENGTH, `url must be at most ${MAX_URL_LENGTH} characters`),
  v.check((s) => URL.canParse(s) && ['https:', 'http:'].includes(new URL(s).protocol), 'url must be an absolute https:// URL'),
);

const headerName = (n: string) => n.toLowerCase();

const headersSchema = v.pipe(
  v.custom<Record<string, unknown>>(isObject, 'options.headers must be an object of header names to string values'),
  v.check((h) => Object.keys(h).length <= MAX_HEADERS, `options.headers may hold at most ${MAX_HEADERS} headers`),
  v.check(
    (h) => Object.keys(h).every((n) => TOKEN.test(n)),
    'options.headers: each name must be an HTTP token (letters, digits, - and the like)',
  ),
  v.check(
    (h) =>
      Object.keys(h).every((n) => !RESERVED_HEADERS.some((r) => (r.endsWith('-') ? headerName(n).startsWith(r) : headerName(n) === r))),
    `options.headers must not set ${RESERVED_HEADERS.map((r) => (r.endsWith('-') ? `${r}*` : r)).join(', ')}: the broker sets those`,
  ),
  v.check(
    (h) => Object.values(h).every((x) => typeof x === 'string' && x.length <= MAX_HEADER_VALUE_LENGTH && HEADER_VALUE.test(x)),
    `options.headers: each value must be a string of at most ${MAX_HEADER_VALUE_LENGTH} printable ASCII characters`,
  ),
  v.transform((h) => Object.fromEntries(Object.entries(h).map(([n, x]) => [headerName(n), x as string]))),
);

const ranged = Object.fromEntries(
  Object.entries(OPTION_RANGES).map(([k, r]) => [k, v.optional(wholeNumberSchema(`options.${k}`, r.min, r.max))]),
) as { [K in keyof typeof OPTION_RANGES]: v.OptionalSchema<ReturnType<typeof wholeNumberSchema>, undefined> };

const optionsSchema = v.object({
  ...ranged,
  subscriptionMode: v.optional(v.picklist(['all', 'new'], 'options.subscriptionMode must be "all" or "new"')),
  headers: v.optional(headersSchema),
});

const OPTION_NAMES = [...Object.keys(OPTION_RANGES), 'subscriptionMode', 'headers'];
const OPTION_KEYS = keySet(OPTION_NAMES);
// Options sent beside `options` rather than in it are the likeliest mistake: point inside.
const OPTION_HINTS = Object.fromEntries(OPTION_NAMES.map((k) => [k, `options.${k}`]));
const CREATE_KEYS = keySet(['queue', 'name', 'url', 'consumerGroup', 'options'], {
  hints: { ...OPTION_HINTS, group: 'consumerGroup', endpoint: 'url' },
});
const CHANGE_KEYS = keySet(['url', 'options', 'state'], { hints: OPTION_HINTS });
const REDRIVE_KEYS = keySet(['queue', 'partition', 'consumerGroup', 'from', 'to', 'limit']);

function parseOptions(raw: unknown): Partial<SubscriptionOptions> {
  if (raw === undefined) return {};
  if (!isObject(raw)) throw badRequest('invalid_request', 'options must be an object, e.g. {"batchSize": 10}.');
  checkKeys(raw, OPTION_KEYS, 'options');
  const parsed = validate(optionsSchema, raw);
  return Object.fromEntries(Object.entries(parsed).filter(([, x]) => x !== undefined)) as Partial<SubscriptionOptions>;
}

const createSchema = v.object({
  queue: nameSchema('queue'),
  name: nameSchema('name'),
  url: urlSchema,
  consumerGroup: v.optional(nameSchema('consumerGroup')),
});

/** POST /subscriptions: {queue, name, url, consumerGroup?, options?}. */
export const readNewSubscription = async (c: Context<BrokerEnv>): Promise<NewSubscription> => parseNewSubscription(await readJson(c));

export function parseNewSubscription(body: unknown): NewSubscription {
  if (!isObject(body)) throw badRequest('invalid_request', 'Send {"queue", "name", "url", "consumerGroup"?, "options"?}.');
  checkKeys(body, CREATE_KEYS, 'the body');
  const { options, ...rest } = body;
  const s = validate(createSchema, rest);
  return { ...s, consumerGroup: s.consumerGroup ?? s.name, options: parseOptions(options) };
}

/** PATCH /subscriptions/:id: {url?, options?, state?}; subscriptionMode is the group's start, fixed at creation. */
export const readSubscriptionChange = async (c: Context<BrokerEnv>): Promise<SubscriptionChange> =>
  parseSubscriptionChange(await readJson(c));

export function parseSubscriptionChange(body: unknown): SubscriptionChange {
  if (!isObject(body)) throw badRequest('invalid_request', 'Send {"url"?, "options"?, "state"?: "active" | "paused"}.');
  checkKeys(body, CHANGE_KEYS, 'the body');
  if (isObject(body.options) && Object.hasOwn(body.options, 'subscriptionMode')) {
    throw badRequest(
      'invalid_request',
      'options.subscriptionMode is fixed at creation; move the group with POST /api/v1/consumer-groups/:group/queues/:queue/seek.',
    );
  }
  const s = validate(
    v.object({ url: v.optional(urlSchema), state: v.optional(v.picklist(['active', 'paused'], 'state must be "active" or "paused"')) }),
    { url: body.url, state: body.state },
  );
  const change: SubscriptionChange = { url: s.url, state: s.state, options: parseOptions(body.options) };
  if (change.url === undefined && change.state === undefined && Object.keys(change.options).length === 0) {
    throw badRequest('invalid_request', 'Nothing to change: send url, options or state.');
  }
  return change;
}

/** The :id of a subscription route. */
export function readSubscriptionId(c: Context<BrokerEnv>): string {
  const id = c.req.param('id');
  if (id === undefined || !UUID.test(id)) {
    throw badRequest('invalid_subscription_id', 'The subscription id must be the UUID POST /api/v1/subscriptions returned.');
  }
  return id.toLowerCase();
}

/** GET /subscriptions?queue=. */
export const readSubscriptionQuery = (c: Context<BrokerEnv>): { queue?: string } =>
  validate(v.object({ queue: v.optional(nameSchema('queue')) }), presentQuery(c.req.query()), 'invalid_query');

/** GET /subscriptions/:id/attempts?limit=&before=: `before` is an attempt id from the previous page. */
export const readAttemptPage = (c: Context<BrokerEnv>): { limit: number; before?: number } =>
  validate(
    v.object({
      limit: v.optional(wholeNumberTextSchema('limit', 1, MAX_ATTEMPT_PAGE), String(DEFAULT_ATTEMPT_PAGE)),
      before: v.optional(wholeNumberTextSchema('before', 1, Number.MAX_SAFE_INTEGER)),
    }),
    presentQuery(c.req.query()),
    'invalid_query',
  );

const redriveSchema = v.object({
  queue: nameSchema('queue'),
  partition: v.optional(nameSchema('partition')),
  consumerGroup: v.optional(nameSchema('consumerGroup')),
  ...windowParams,
  limit: v.optional(wholeNumberSchema('limit', 1, MAX_REDRIVE_LIMIT), DEFAULT_REDRIVE_LIMIT),
});

/** POST /dlq/redrive: {queue, partition?, consumerGroup?, from?, to?, limit?}. */
export const readRedrive = async (c: Context<BrokerEnv>): Promise<RedriveFilter> => parseRedrive(await readJson(c));

export function parseRedrive(body: unknown): RedriveFilter {
  if (!isObject(body)) throw badRequest('invalid_request', 'Send {"queue", "partition"?, "consumerGroup"?, "from"?, "to"?, "limit"?}.');
  checkKeys(body, REDRIVE_KEYS, 'the body');
  const present = Object.fromEntries(Object.entries(body).filter(([, x]) => x !== null));
  return validate(redriveSchema, present);
}
