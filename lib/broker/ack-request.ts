// Ack bodies (SPEC §3.3): a single ack or {consumerGroup?, acknowledgments: [...]}. Any invalid
// item makes the whole request a 400, so nothing moves.
import * as v from 'valibot';
import { badRequest } from '../errors.js';
import { validate } from '../http/body.js';
import { nameSchema, QUEUE_MODE_GROUP, transactionIdSchema } from '../http/names.js';

export type AckStatus = 'completed' | 'failed' | 'retry' | 'dlq';

export interface AckItem {
  transactionId: string;
  /** The partition id as sent; a non-numeric one is simply not found. */
  partitionId: string;
  /** Null: no lease (the wire's "" or an absent leaseId). */
  leaseId: string | null;
  status: AckStatus;
  consumerGroup: string;
  error: string | null;
  /** The offset pop returned, when the client echoes it: no hash lookup needed. */
  offset: number | null;
}

const STATUSES: Record<string, AckStatus> = {
  completed: 'completed',
  success: 'completed',
  failed: 'failed',
  retry: 'retry',
  dlq: 'dlq',
};

const itemSchema = v.looseObject({
  transactionId: transactionIdSchema,
  partitionId: v.union(
    [v.pipe(v.string(), v.minLength(1, 'partitionId must not be empty')), v.pipe(v.number(), v.integer())],
    'partitionId is required: the partitionId the pop returned',
  ),
  leaseId: v.optional(v.nullable(v.string('leaseId must be a string'))),
  status: v.optional(v.string('status must be a string')),
  consumerGroup: v.optional(v.nullable(nameSchema('consumerGroup'))),
  error: v.optional(v.nullable(v.string('error must be a string or null'))),
  offset: v.optional(v.nullable(v.pipe(v.number('offset must be a number'), v.integer('offset must be an integer'), v.minValue(0, 'offset must be >= 0')))),
});

/** One ack item; `path` names it in error messages. `group` overrides the item's consumerGroup. */
export function parseAckItem(raw: unknown, path: string, group?: string | null): AckItem {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw badRequest('invalid_request', `${path} must be an ack object {transactionId, partitionId, status, leaseId?}`);
  }
  const parsed = v.safeParse(itemSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0]!;
    const field = v.getDotPath(issue);
    throw badRequest('invalid_request', `${path}${field ? `.${field}` : ''}: ${issue.message}`);
  }
  const item = parsed.output;
  const status = STATUSES[item.status ?? 'completed'];
  if (!status) {
    throw badRequest('invalid_status', `${path}.status must be completed, success, failed, retry or dlq; got "${item.status}".`);
  }
  return {
    transactionId: item.transactionId,
    partitionId: String(item.partitionId),
    leaseId: item.leaseId ? item.leaseId : null,
    status,
    consumerGroup: group ?? item.consumerGroup ?? QUEUE_MODE_GROUP,
    error: item.error ?? null,
    offset: item.offset ?? null,
  };
}

export function parseAckBatch(raw: unknown, path = 'body'): AckItem[] {
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as { acknowledgments?: unknown }).acknowledgments)) {
    throw badRequest('invalid_request', `${path} must be {"consumerGroup"?, "acknowledgments": [...]}`);
  }
  const body = raw as { acknowledgments: unknown[]; consumerGroup?: unknown };
  const group =
    body.consumerGroup === undefined || body.consumerGroup === null ? null : validate(nameSchema('consumerGroup'), body.consumerGroup);
  return body.acknowledgments.map((item, i) => parseAckItem(item, `acknowledgments[${i}]`, group));
}
