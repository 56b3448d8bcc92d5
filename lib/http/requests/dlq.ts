// The DLQ, message and trace routes (docs/semantics.md#dlq-retry-and-delete,
// docs/semantics.md#queens-other-routes): list filters in the query string, the
// (partitionId, transactionId) address of one message with an optional consumer group, and the
// trace body Queen's consume loops post.
import type { Context } from 'hono';
import * as v from 'valibot';
import type { DlqAddress, DlqFilter } from '../../broker/dead-letter.js';
import type { MessageFilter } from '../../broker/message-list.js';
import { MESSAGE_STATUSES } from '../../broker/message-status.js';
import {
  DEFAULT_DLQ_PAGE,
  DEFAULT_MESSAGE_PAGE,
  DEFAULT_TRACE_NAMES_PAGE,
  DEFAULT_TRACE_PAGE,
  INT4_MAX,
  MAX_DLQ_OFFSET,
  MAX_DLQ_PAGE,
  MAX_EVENT_TYPE_LENGTH,
  MAX_MESSAGE_DEPTH,
  MAX_MESSAGE_PAGE,
  MAX_TRACE_DATA_BYTES,
  MAX_TRACE_NAMES,
  MAX_TRACE_PAGE,
} from '../../broker/limits.js';
import { MAX_NAME_LENGTH, nameSchema, QUEUE_MODE_GROUP, transactionIdSchema } from '../../broker/names.js';
import type { Page, TraceRequest } from '../../broker/traces.js';
import { badRequest, tooLarge } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { isObject, pageParams, parsePartitionId, presentQuery, readJson, requireObject, validate, windowParams } from './body.js';

const listQuery = v.object({
  queue: v.optional(nameSchema('queue')),
  consumerGroup: v.optional(nameSchema('consumerGroup')),
  partition: v.optional(nameSchema('partition')),
  ...windowParams,
  ...pageParams(MAX_DLQ_PAGE, DEFAULT_DLQ_PAGE, MAX_DLQ_OFFSET),
});

export const readDlqQuery = (c: Context<BrokerEnv>): DlqFilter => parseDlqQuery(c.req.query());

/** GET /dlq filters. */
export function parseDlqQuery(query: Record<string, string>): DlqFilter {
  return validate(listQuery, presentQuery(query), 'invalid_query');
}

const messageQuery = v.object({
  queue: v.optional(nameSchema('queue')),
  partition: v.optional(nameSchema('partition')),
  ns: v.optional(nameSchema('ns')),
  namespace: v.optional(nameSchema('namespace')),
  task: v.optional(nameSchema('task')),
  status: v.optional(v.picklist(MESSAGE_STATUSES, `status must be one of ${MESSAGE_STATUSES.join(', ')}`)),
  ...windowParams,
  ...pageParams(MAX_MESSAGE_PAGE, DEFAULT_MESSAGE_PAGE, MAX_MESSAGE_DEPTH),
});

/** GET /messages: Queen's filters; the namespace is `ns` there, and `namespace` is accepted too. */
export const readMessageFilter = (c: Context<BrokerEnv>): MessageFilter => parseMessageFilter(c.req.query());

export function parseMessageFilter(query: Record<string, string>): MessageFilter {
  const { ns, namespace, ...f } = validate(messageQuery, presentQuery(query), 'invalid_query');
  if (f.offset + f.limit > MAX_MESSAGE_DEPTH) {
    throw badRequest('invalid_query', `offset + limit must be at most ${MAX_MESSAGE_DEPTH}; narrow the from/to window to page deeper.`);
  }
  return { ...f, namespace: ns ?? namespace };
}

/** GET /messages/:partitionId/:transactionId: every group's status, so no group filter. */
export const readMessageAddress = (c: Context<BrokerEnv>): DlqAddress => parseDlqAddress(c.req.param(), undefined);

/** DELETE /messages/:partitionId/:transactionId[?consumerGroup=]. */
export const readDlqAddress = (c: Context<BrokerEnv>): DlqAddress => parseDlqAddress(c.req.param(), c.req.query('consumerGroup'));

/** POST /messages/:partitionId/:transactionId/retry: the group in the body, else in the query string. */
export async function readRetryAddress(c: Context<BrokerEnv>): Promise<DlqAddress> {
  const body = requireObject(await readJson(c, true), 'Send {"consumerGroup"?: "<name>"} or an empty body.');
  const group = Object.hasOwn(body, 'consumerGroup') ? body.consumerGroup : c.req.query('consumerGroup');
  return parseDlqAddress(c.req.param(), group);
}

/** The (partitionId, transactionId) of a message route, plus an optional consumer group. */
export function parseDlqAddress(params: { partitionId?: string; transactionId?: string }, consumerGroup: unknown): DlqAddress {
  const partitionId = parsePartitionId(params.partitionId);
  const transactionId = validate(storedText(transactionIdSchema, 'transactionId'), params.transactionId, 'invalid_transaction_id');
  const group =
    consumerGroup === undefined || consumerGroup === null || consumerGroup === ''
      ? undefined
      : validate(nameSchema('consumerGroup'), consumerGroup, 'invalid_name');
  return { partitionId, transactionId, consumerGroup: group };
}

// PostgreSQL text (and jsonb strings) cannot hold U+0000: refuse it rather than fail in SQL.
const storedText = <S extends v.GenericSchema<unknown, string>>(schema: S, what: string) =>
  v.pipe(
    schema,
    v.check((s: string) => !s.includes('\u0000'), `${what} must not contain the character U+0000`),
  );

const hasNul = (x: unknown): boolean =>
  typeof x === 'string'
    ? x.includes('\u0000')
    : typeof x === 'object' && x !== null && Object.entries(x).some(([k, y]) => k.includes('\u0000') || hasNul(y));

const traceNameSchema = v.pipe(
  v.string('traceNames must be a string or an array of strings'),
  v.maxLength(MAX_NAME_LENGTH, `each trace name must be at most ${MAX_NAME_LENGTH} characters`),
  v.check((s) => !/[\u0000-\u001f\u007f]/.test(s), 'trace names must not contain control characters'),
);

const traceSchema = v.object({
  transactionId: storedText(transactionIdSchema, 'transactionId'),
  consumerGroup: v.optional(v.nullable(nameSchema('consumerGroup'))),
  eventType: v.optional(
    v.nullable(
      v.pipe(
        v.string('eventType must be a string'),
        v.minLength(1, 'eventType must not be empty'),
        v.maxLength(MAX_EVENT_TYPE_LENGTH, `eventType must be at most ${MAX_EVENT_TYPE_LENGTH} characters`),
        v.check((s) => !/[\u0000-\u001f\u007f]/.test(s), 'eventType must not contain control characters'),
      ),
    ),
  ),
  traceNames: v.optional(
    v.nullable(
      v.union([
        traceNameSchema,
        v.pipe(v.array(traceNameSchema), v.maxLength(MAX_TRACE_NAMES, `send at most ${MAX_TRACE_NAMES} traceNames`)),
      ]),
    ),
  ),
});

export const readTrace = async (c: Context<BrokerEnv>): Promise<TraceRequest> => parseTrace(await readJson(c));

/** POST /traces: {transactionId, partitionId, data, consumerGroup?, eventType?, traceNames?}. */
export function parseTrace(body: unknown): TraceRequest {
  if (!isObject(body) || !('transactionId' in body) || !('partitionId' in body)) {
    throw badRequest('invalid_request', 'transactionId and partitionId are required: send the ones the pop returned.');
  }
  if (!('data' in body)) throw badRequest('invalid_request', 'data is required: the JSON value the trace records.');
  const partitionId = parsePartitionId(body.partitionId);
  const t = validate(traceSchema, body);
  if (hasNul(body.data)) throw badRequest('invalid_request', 'data must not contain the character U+0000, which PostgreSQL cannot store.');
  const data = JSON.stringify(body.data);
  if (new TextEncoder().encode(data).byteLength > MAX_TRACE_DATA_BYTES) {
    throw tooLarge('trace_too_large', `A trace's data must be at most ${MAX_TRACE_DATA_BYTES} bytes of JSON; record less.`);
  }
  const names = typeof t.traceNames === 'string' ? [t.traceNames] : (t.traceNames ?? []);
  return {
    partitionId,
    transactionId: t.transactionId,
    consumerGroup: t.consumerGroup ?? QUEUE_MODE_GROUP,
    eventType: t.eventType ?? 'info',
    data,
    traceNames: [...new Set(names.filter((n) => n !== ''))],
  };
}

const pageQuery = (defaultLimit: number) => v.object(pageParams(MAX_TRACE_PAGE, defaultLimit, INT4_MAX));

/** GET /traces/by-name/:name?limit&offset. */
export function readTracesByName(c: Context<BrokerEnv>): { name: string; page: Page } {
  const name = validate(v.pipe(traceNameSchema, v.minLength(1, 'the trace name must not be empty')), c.req.param('name'), 'invalid_name');
  return { name, page: validate(pageQuery(DEFAULT_TRACE_PAGE), presentQuery(c.req.query()), 'invalid_query') };
}

/** GET /traces/names?limit&offset. */
export const readTraceNamesPage = (c: Context<BrokerEnv>): Page =>
  validate(pageQuery(DEFAULT_TRACE_NAMES_PAGE), presentQuery(c.req.query()), 'invalid_query');
