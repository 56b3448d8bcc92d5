// Pop query parameters (docs/semantics.md#pop-and-leases): every value checked before anything is
// read or leased.
import type { Context } from 'hono';
import * as v from 'valibot';
import { DEFAULT_POP_TIMEOUT_MS, MAX_POP_BATCH, MAX_POP_PARTITIONS, MAX_POP_TIMEOUT_MS } from '../../broker/limits.js';
import { nameSchema, QUEUE_MODE_GROUP } from '../../broker/names.js';
import type { PopRequest, SubscriptionMode } from '../../broker/pop.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { ownEntry, timestampSchema, validate, wholeNumberTextSchema } from './body.js';
import { checkKeys, keySet } from './keys.js';

const MODES: Record<string, 'all' | 'new'> = {
  all: 'all',
  from_beginning: 'all',
  earliest: 'all',
  new: 'new',
  'new-only': 'new',
  latest: 'new',
};

type Query = Record<string, string | undefined>;

// Every parameter Queen's clients send (test/http/client-shapes.test.ts); another is a mistake that
// would otherwise be ignored, e.g. ?limit=10 popping one message.
const POP_PARAMS = keySet(
  ['batch', 'wait', 'timeout', 'consumerGroup', 'namespace', 'task', 'autoAck', 'subscriptionMode', 'subscriptionFrom', 'partitions'],
  {
    noun: 'query parameter',
    hints: {
      limit: 'batch',
      count: 'batch',
      max: 'batch',
      group: 'consumerGroup',
      timeoutMillis: 'timeout',
      waitTime: 'timeout',
      partition: 'the path /pop/queue/:queue/partition/:partition',
    },
  },
);

export const readPopRequest = (c: Context<BrokerEnv>): PopRequest => parsePopRequest(c.req.param(), c.req.query());

export function parsePopRequest(route: { queue?: string; partition?: string }, query: Query): PopRequest {
  checkKeys(query, POP_PARAMS, 'the query string');
  const queue = route.queue === undefined ? null : validate(nameSchema('queue'), route.queue);
  const partition = route.partition === undefined ? null : validate(nameSchema('partition'), route.partition);
  const namespace = optionalName(query, 'namespace');
  const task = optionalName(query, 'task');
  if (queue === null && namespace === null && task === null) {
    throw badRequest('invalid_request', 'A discovery pop needs ?namespace= or ?task= (or pop /api/v1/pop/queue/:queue).');
  }
  const group = optionalName(query, 'consumerGroup') ?? QUEUE_MODE_GROUP;
  const subscription = parseSubscription(query);
  const { mode, from } = group === QUEUE_MODE_GROUP ? { mode: 'all' as const, from: null } : subscription;
  return {
    queue,
    partition,
    namespace: queue === null ? namespace : null,
    task: queue === null ? task : null,
    group,
    batch: integer(query, 'batch', 1, 1, MAX_POP_BATCH),
    partitions: partition === null ? integer(query, 'partitions', 1, 1, MAX_POP_PARTITIONS) : 1,
    wait: boolean(query, 'wait'),
    timeoutMs: integer(query, 'timeout', DEFAULT_POP_TIMEOUT_MS, 0, MAX_POP_TIMEOUT_MS),
    autoAck: boolean(query, 'autoAck'),
    mode,
    from,
  };
}

const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

// subscriptionFrom wins over subscriptionMode; `now` is the same as mode `new`.
function parseSubscription(query: Query): { mode: SubscriptionMode; from: Date | null } {
  const from = query.subscriptionFrom;
  if (from !== undefined && from !== '') {
    if (from === 'now') return { mode: 'new', from: null };
    const ms = v.is(timestampSchema('subscriptionFrom'), from) ? Date.parse(from) : NaN;
    // The instant goes to SQL as a Date, so it must also lie within years 1..9999 in UTC.
    if (!(ms >= FIRST_INSTANT && ms <= LAST_INSTANT)) {
      throw badRequest('invalid_subscription_from', `subscriptionFrom must be an ISO 8601 timestamp or "now", got "${from}".`);
    }
    return { mode: 'from', from: new Date(ms) };
  }
  const raw = query.subscriptionMode;
  if (raw === undefined || raw === '') return { mode: 'all', from: null };
  const mode = ownEntry(MODES, raw);
  if (!mode) {
    throw badRequest(
      'invalid_subscription_mode',
      `subscriptionMode must be one of all, from_beginning, earliest, new, new-only, latest; got "${raw}".`,
    );
  }
  return { mode, from: null };
}

function optionalName(query: Query, key: string): string | null {
  const raw = query[key];
  if (raw === undefined || raw === '') return null;
  return validate(nameSchema(key), raw);
}

function integer(query: Query, key: string, fallback: number, min: number, max: number): number {
  const raw = query[key];
  return raw === undefined || raw === '' ? fallback : validate(wholeNumberTextSchema(key, min, max), raw);
}

const booleanSchema = v.picklist(['true', 'false', '1', '0'], 'must be true or false');

function boolean(query: Query, key: string): boolean {
  const raw = query[key];
  if (raw === undefined || raw === '') return false;
  const ok = v.safeParse(booleanSchema, raw);
  if (!ok.success) throw badRequest('invalid_request', `${key} must be true or false, got "${raw}".`);
  return raw === 'true' || raw === '1';
}
