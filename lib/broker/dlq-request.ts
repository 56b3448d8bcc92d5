// Query strings and addresses of the DLQ and message routes (SPEC §3.8).
import * as v from 'valibot';
import { badRequest } from '../errors.js';
import { validate } from '../http/body.js';
import { nameSchema, transactionIdSchema } from '../http/names.js';
import type { DlqAddress, DlqFilter } from './dlq.js';
import { timestampSchema } from './seek.js';

const integer = (what: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${what} must be a whole number`),
    v.transform(Number),
    v.minValue(min, `${what} must be at least ${min}`),
    v.maxValue(max, `${what} must be at most ${max}`),
  );

const listQuery = v.object({
  queue: v.optional(nameSchema('queue')),
  consumerGroup: v.optional(nameSchema('consumerGroup')),
  partition: v.optional(nameSchema('partition')),
  from: v.optional(timestampSchema('from')),
  to: v.optional(timestampSchema('to')),
  limit: v.optional(integer('limit', 1, 1000), '100'),
  offset: v.optional(integer('offset', 0, Number.MAX_SAFE_INTEGER), '0'),
});

/** GET /dlq filters; empty parameters count as absent. */
export function parseDlqQuery(query: Record<string, string>): DlqFilter {
  const present = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
  return validate(listQuery, present, 'invalid_query');
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
