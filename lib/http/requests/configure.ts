// Configure (docs/semantics.md#configure), queue resources and consumer groups, seek included
// (docs/semantics.md#consumer-groups-and-seek): route parameters, query filters and bodies, checked
// against the option and name rules of the broker.
import type { Context } from 'hono';
import * as v from 'valibot';
import { OPTION_NAMES, OPTION_SCHEMAS, type ConfigureRequest, type OptionName, type QueueOptions } from '../../broker/configure.js';
import { DEFAULT_LAGGING_SECONDS, MAX_OFFSET } from '../../broker/limits.js';
import { DEFAULT_PARTITION, nameSchema } from '../../broker/names.js';
import type { SubscriptionUpdate } from '../../broker/consumer-groups.js';
import type { PartitionSeekRequest, SeekRequest, SeekTarget } from '../../broker/seek.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import {
  flag,
  isObject,
  objectSchema,
  presentQuery,
  readJson,
  timestampSchema,
  validate,
  wholeNumberSchema,
  wholeNumberTextSchema,
} from './body.js';
import { checkKeys, keySet, nearestKey } from './keys.js';

/** A name in the route, e.g. `:queue`; `what` names it in the error. */
export const nameParam = (c: Context<BrokerEnv>, key: string, what: string): string =>
  validate(nameSchema(what), c.req.param(key), 'invalid_name');

/** An optional name filter in the query string; empty counts as absent. */
export const nameQuery = (c: Context<BrokerEnv>, key: string): string | undefined => {
  const raw = c.req.query(key);
  return raw === undefined || raw === '' ? undefined : validate(nameSchema(key), raw, 'invalid_name');
};

const bodySchema = v.object({
  queue: nameSchema('queue'),
  // Queen's C++ client sends "" for a namespace or task it was not given: absent, as null is.
  namespace: v.optional(v.nullable(v.union([v.literal(''), nameSchema('namespace')], 'namespace must be a string'))),
  task: v.optional(v.nullable(v.union([v.literal(''), nameSchema('task')], 'task must be a string'))),
  // Not v.record(): it accepts an array and silently drops keys such as "constructor".
  options: v.optional(v.nullable(objectSchema('options must be an object of option names to values, like {"leaseTime":300}'))),
});

// What Queen's clients send (test/http/client-shapes.test.ts); an option at the top level is the
// mistake that otherwise configures the defaults, so it is pointed under options.
const CONFIGURE_KEYS = keySet(['queue', 'namespace', 'task', 'options'], {
  required: ['queue'],
  hints: {
    ...Object.fromEntries(OPTION_NAMES.map((name) => [name, `options.${name}`])),
    name: 'queue',
    queueName: 'queue',
    config: 'options',
  },
});
const OPTION_KEYS = keySet(OPTION_NAMES);

export const readConfigureRequest = async (c: Context<BrokerEnv>): Promise<ConfigureRequest> => parseConfigureRequest(await readJson(c));

/**
 * Checks a configure body: names per docs/semantics.md#names-and-limits, each option's type and
 * range, no unknown option.
 */
export function parseConfigureRequest(body: unknown): ConfigureRequest {
  if (!isObject(body)) {
    throw badRequest('invalid_request', 'Send a JSON object like {"queue":"orders","options":{"leaseTime":300}}.');
  }
  checkKeys(body, CONFIGURE_KEYS, 'the body');
  const parsed = validate(bodySchema, body);
  const raw = parsed.options ?? {};
  const unknown = Object.keys(raw).filter((k) => !Object.hasOwn(OPTION_SCHEMAS, k));
  if (unknown.length > 0) {
    const nearest = unknown.length === 1 ? nearestKey(unknown[0]!, OPTION_KEYS) : undefined;
    throw badRequest(
      'unknown_option',
      `Unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}` +
        `${nearest ? `: did you mean "${nearest}"?` : ''}; known options are ${OPTION_NAMES.join(', ')}.`,
    );
  }
  const options: Partial<Record<OptionName, unknown>> = {};
  for (const [key, value] of Object.entries(raw) as [OptionName, unknown][]) {
    options[key] = validate(OPTION_SCHEMAS[key], value, 'invalid_option');
  }
  return { queue: parsed.queue, namespace: parsed.namespace || null, task: parsed.task || null, options: options as Partial<QueueOptions> };
}

const seekSchema = v.object({
  toEnd: v.optional(v.boolean('toEnd must be true or false')),
  timestamp: v.optional(timestampSchema('timestamp')),
  offset: v.optional(wholeNumberSchema('offset', 0, MAX_OFFSET)),
  partition: v.optional(nameSchema('partition')),
});

const ONE_OF = 'Send exactly one of {"toEnd":true}, {"timestamp":"<ISO 8601>"} or {"offset":N,"partition":"<name>"}.';

/** POST /consumer-groups/:group/queues/:queue/seek. */
export async function readSeekRequest(c: Context<BrokerEnv>): Promise<SeekRequest> {
  const group = nameParam(c, 'group', 'consumer group');
  const queue = nameParam(c, 'queue', 'queue');
  return { group, queue, target: parseSeekTarget(await readJson(c)) };
}

export function parseSeekTarget(body: unknown): SeekTarget {
  if (!isObject(body)) throw badRequest('invalid_seek', ONE_OF);
  const { toEnd, timestamp, offset, partition } = validate(seekSchema, body, 'invalid_seek');
  const chosen = [toEnd === true, timestamp !== undefined, offset !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw badRequest('invalid_seek', ONE_OF);
  if (partition !== undefined && offset === undefined) throw badRequest('invalid_seek', `partition only goes with offset. ${ONE_OF}`);
  if (toEnd) return { kind: 'end' };
  if (timestamp !== undefined) return { kind: 'timestamp', timestamp };
  return { kind: 'offset', offset: offset!, partition: partition ?? DEFAULT_PARTITION };
}

/** POST /consumer-groups/:group/queues/:queue/partitions/:partition/seek: any body is ignored, as Queen does. */
export const readPartitionSeek = (c: Context<BrokerEnv>): PartitionSeekRequest => ({
  group: nameParam(c, 'group', 'consumer group'),
  queue: nameParam(c, 'queue', 'queue'),
  partition: nameParam(c, 'partition', 'partition'),
});

const subscriptionSchema = v.object({ subscriptionTimestamp: timestampSchema('subscriptionTimestamp') });

/** POST /consumer-groups/:group/subscription {subscriptionTimestamp}. */
export async function readSubscriptionUpdate(c: Context<BrokerEnv>): Promise<SubscriptionUpdate> {
  const group = nameParam(c, 'group', 'consumer group');
  const body = await readJson(c, true);
  if (!isObject(body) || !('subscriptionTimestamp' in body)) {
    throw badRequest('invalid_request', 'Missing subscriptionTimestamp: send {"subscriptionTimestamp":"<ISO 8601>"}.');
  }
  return { group, timestamp: validate(subscriptionSchema, body).subscriptionTimestamp };
}

const deleteQuery = v.object({ deleteMetadata: v.optional(flag('deleteMetadata'), 'true') });

/** DELETE /consumer-groups/...?deleteMetadata=false keeps the group's subscriptions. */
export const readDeleteMetadata = (c: Context<BrokerEnv>): boolean =>
  validate(deleteQuery, presentQuery(c.req.query()), 'invalid_query').deleteMetadata;

const laggingQuery = v.object({
  minLagSeconds: v.optional(wholeNumberTextSchema('minLagSeconds', 0, Number.MAX_SAFE_INTEGER), String(DEFAULT_LAGGING_SECONDS)),
});

/** GET /consumer-groups/lagging?minLagSeconds=N (default one hour, as Queen's). */
export const readMinLagSeconds = (c: Context<BrokerEnv>): number =>
  validate(laggingQuery, presentQuery(c.req.query()), 'invalid_query').minLagSeconds;
