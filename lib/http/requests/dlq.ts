// The DLQ and message routes (SPEC §3.8): list filters in the query string, and the
// (partitionId, transactionId) address of one message with an optional consumer group.
import type { Context } from 'hono';
import * as v from 'valibot';
import type { DlqAddress, DlqFilter } from '../../broker/dead-letter.js';
import { DEFAULT_DLQ_PAGE, MAX_DLQ_PAGE } from '../../broker/limits.js';
import { nameSchema, transactionIdSchema } from '../../broker/names.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { isObject, queryInteger as integer, readJson, timestampSchema, validate } from './body.js';

const listQuery = v.object({
  queue: v.optional(nameSchema('queue')),
  consumerGroup: v.optional(nameSchema('consumerGroup')),
  partition: v.optional(nameSchema('partition')),
  from: v.optional(timestampSchema('from')),
  to: v.optional(timestampSchema('to')),
  limit: v.optional(integer('limit', 1, MAX_DLQ_PAGE), String(DEFAULT_DLQ_PAGE)),
  offset: v.optional(integer('offset', 0, Number.MAX_SAFE_INTEGER), '0'),
});

export const readDlqQuery = (c: Context<BrokerEnv>): DlqFilter => parseDlqQuery(c.req.query());

/** GET /dlq filters; empty parameters count as absent. */
export function parseDlqQuery(query: Record<string, string>): DlqFilter {
  const present = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
  return validate(listQuery, present, 'invalid_query');
}

/** GET /messages/:partitionId/:transactionId: every group's status, so no group filter. */
export const readMessageAddress = (c: Context<BrokerEnv>): DlqAddress => parseDlqAddress(c.req.param(), undefined);

/** DELETE /messages/:partitionId/:transactionId[?consumerGroup=]. */
export const readDlqAddress = (c: Context<BrokerEnv>): DlqAddress => parseDlqAddress(c.req.param(), c.req.query('consumerGroup'));

/** POST /messages/:partitionId/:transactionId/retry: the group in the body, else in the query string. */
export async function readRetryAddress(c: Context<BrokerEnv>): Promise<DlqAddress> {
  const body = await readJson(c, true);
  const group = isObject(body) && 'consumerGroup' in body ? body.consumerGroup : c.req.query('consumerGroup');
  return parseDlqAddress(c.req.param(), group);
}

/** The (partitionId, transactionId) of a message route, plus an optional consumer group. */
export function parseDlqAddress(params: { partitionId?: string; transactionId?: string }, consumerGroup: unknown): DlqAddress {
  const partitionId = params.partitionId ?? '';
  if (!/^[1-9]\d{0,17}$/.test(partitionId)) {
    throw badRequest('invalid_partition_id', 'partitionId must be the numeric id a push or pop returned (partitionId / partition_id).');
  }
  const transactionId = validate(transactionIdSchema, params.transactionId, 'invalid_transaction_id');
  const group =
    consumerGroup === undefined || consumerGroup === null || consumerGroup === ''
      ? undefined
      : validate(nameSchema('consumerGroup'), consumerGroup, 'invalid_name');
  return { partitionId, transactionId, consumerGroup: group };
}
