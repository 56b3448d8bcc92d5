// Ack bodies (docs/semantics.md#acks): a single ack or {consumerGroup?, acknowledgments: [...]};
// any invalid item makes the whole request a 400, so nothing moves. Also lease extend
// (docs/semantics.md#lease-extend) and the transaction's operations
// (docs/semantics.md#transactions), which mix acks and pushes.
import type { Context } from 'hono';
import * as v from 'valibot';
import type { AckItem, AckStatus } from '../../broker/ack.js';
import { DEFAULT_EXTEND_SECONDS, MAX_EXTEND_SECONDS, MAX_OFFSET } from '../../broker/limits.js';
import { nameSchema, QUEUE_MODE_GROUP, transactionIdSchema } from '../../broker/names.js';
import type { Operation, TransactionRequest } from '../../broker/transaction.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import {
  isObject,
  ownEntry,
  parsePartitionId,
  readJson,
  readText,
  requireObject,
  textSchema,
  validate,
  wholeNumberSchema,
} from './body.js';
import { checkKeys, keySet } from './keys.js';
import { parsePushItems } from './push.js';
import { parseJsonRaw, type JsonPath } from './raw-json.js';

// The wire's "success" is an alias of completed.
const STATUSES: Record<string, AckStatus> = {
  completed: 'completed',
  success: 'completed',
  failed: 'failed',
  retry: 'retry',
  dlq: 'dlq',
};

// The keys Queen's clients send in an ack, a batch's items and a transaction's ack operation
// (test/http/client-shapes.test.ts); `type` is the operation's.
const ACK_FIELDS = ['transactionId', 'partitionId', 'leaseId', 'status', 'consumerGroup', 'error', 'offset'];
const ACK_HINTS = {
  id: 'transactionId',
  messageId: 'transactionId',
  partition: 'partitionId',
  partition_id: 'partitionId',
  lease: 'leaseId',
  group: 'consumerGroup',
  errorMessage: 'error',
  reason: 'error',
};
const ACK_KEYS = keySet(ACK_FIELDS, { required: ['transactionId', 'partitionId'], hints: ACK_HINTS });
const ACK_OPERATION_KEYS = keySet(['type', ...ACK_FIELDS], { required: ['transactionId', 'partitionId'], hints: ACK_HINTS });
const BATCH_KEYS = keySet(['acknowledgments', 'consumerGroup'], {
  required: ['acknowledgments'],
  hints: { acks: 'acknowledgments', items: 'acknowledgments', group: 'consumerGroup' },
});
const BATCH_OPERATION_KEYS = keySet(['type', 'acknowledgments', 'consumerGroup'], { hints: BATCH_KEYS.hints });
const PUSH_OPERATION_KEYS = keySet(['type', 'items'], { required: ['items'], hints: { messages: 'items' } });
const TRANSACTION_KEYS = keySet(['operations', 'requiredLeases'], {
  required: ['operations'],
  hints: { leases: 'requiredLeases', ops: 'operations' },
});

const itemSchema = v.looseObject({
  transactionId: transactionIdSchema,
  leaseId: v.optional(v.nullable(textSchema('leaseId'))),
  status: v.optional(v.string('status must be a string')),
  consumerGroup: v.optional(v.nullable(nameSchema('consumerGroup'))),
  error: v.optional(v.nullable(textSchema('error'))),
  offset: v.optional(v.nullable(wholeNumberSchema('offset', 0, MAX_OFFSET))),
});

export const readAck = async (c: Context<BrokerEnv>): Promise<AckItem[]> => [parseAckItem(await readJson(c), 'body')];

export const readAckBatch = async (c: Context<BrokerEnv>): Promise<AckItem[]> => parseAckBatch(await readJson(c));

/** One ack item; `path` names it in error messages. `group` overrides the item's consumerGroup. */
export function parseAckItem(raw: unknown, path: string, group?: string | null, keys = ACK_KEYS): AckItem {
  if (!isObject(raw)) {
    throw badRequest('invalid_request', `${path} must be an ack object {transactionId, partitionId, status, leaseId?}`);
  }
  checkKeys(raw, keys, path === 'body' ? 'the body' : path);
  const item = validate(itemSchema, raw, 'invalid_request', path);
  // The same rule as a partitionId in a URL path: a name or "-5" is a mistake, not an unknown message.
  const partitionId = parsePartitionId(raw.partitionId);
  const status = ownEntry(STATUSES, item.status ?? 'completed');
  if (!status) {
    throw badRequest('invalid_status', `${path}.status must be completed, success, failed, retry or dlq; got "${item.status}".`);
  }
  return {
    transactionId: item.transactionId,
    partitionId,
    leaseId: item.leaseId ? item.leaseId : null,
    status,
    consumerGroup: group ?? item.consumerGroup ?? QUEUE_MODE_GROUP,
    error: item.error ?? null,
    offset: item.offset ?? null,
  };
}

export function parseAckBatch(raw: unknown, path = 'body', keys = BATCH_KEYS): AckItem[] {
  if (isObject(raw)) checkKeys(raw, keys, path === 'body' ? 'the body' : path);
  if (!isObject(raw) || !Array.isArray(raw.acknowledgments)) {
    throw badRequest('invalid_request', `${path} must be {"consumerGroup"?, "acknowledgments": [...]}`);
  }
  const group =
    raw.consumerGroup === undefined || raw.consumerGroup === null ? null : validate(nameSchema('consumerGroup'), raw.consumerGroup);
  return raw.acknowledgments.map((item, i) => parseAckItem(item, `acknowledgments[${i}]`, group));
}

const extendSchema = v.object({ seconds: v.optional(v.nullable(wholeNumberSchema('seconds', 1, MAX_EXTEND_SECONDS))) });

/** POST /lease/:leaseId/extend: the lease id and {seconds?}; an empty body extends by the default. */
export async function readLeaseExtend(c: Context<BrokerEnv>): Promise<{ leaseId: string; seconds: number }> {
  const leaseId = validate(textSchema('leaseId'), c.req.param('leaseId'));
  const body = requireObject(await readJson(c, true), 'Send {"seconds": N} or an empty body.');
  const { seconds } = validate(extendSchema, body);
  return { leaseId, seconds: seconds ?? DEFAULT_EXTEND_SECONDS };
}

// operations[i].items[j].payload is kept as source text, as push keeps it.
const isPushItem = (p: JsonPath) => p.length === 4 && p[0] === 'operations' && p[2] === 'items' && typeof p[3] === 'number';

export async function readTransaction(c: Context<BrokerEnv>): Promise<TransactionRequest> {
  const body = parseJsonRaw(await readText(c), { member: 'payload', where: isPushItem });
  if (isObject(body)) checkKeys(body, TRANSACTION_KEYS, 'the body');
  return { operations: parseOperations(body, c.get('config')), requiredLeases: parseRequiredLeases(body) };
}

// Queen's clients list the leases of the messages they ack here, deduplicated; absent is none.
const requiredLeasesSchema = v.optional(
  v.nullable(v.array(v.string('requiredLeases must be an array of leaseId strings'), 'requiredLeases must be an array of leaseId strings')),
);

function parseRequiredLeases(body: unknown): string[] {
  const leases = validate(
    requiredLeasesSchema,
    (body as { requiredLeases?: unknown } | null)?.requiredLeases,
    'invalid_request',
    'requiredLeases',
  );
  return (leases ?? []).filter((l) => l !== '');
}

export function parseOperations(body: unknown, limits: { maxMessageBytes: number }): Operation[] {
  const ops = isObject(body) ? body.operations : undefined;
  if (!Array.isArray(ops) || ops.length === 0) {
    throw badRequest('invalid_request', 'A transaction needs "operations": [{"type":"ack",...} | {"type":"push","items":[...]}].');
  }
  return ops.map((raw: unknown, i): Operation => {
    const path = `operations[${i}]`;
    const op = requireObject(raw, `${path} must be an object {"type":"ack",...} or {"type":"push","items":[...]}.`);
    const type = op.type;
    if (type === 'push') {
      checkKeys(op, PUSH_OPERATION_KEYS, path);
      return { type, items: parsePushItems(op.items, limits, `${path}.items`) };
    }
    if (type === 'ack') {
      const batch = Array.isArray(op.acknowledgments);
      return {
        type,
        items: batch ? parseAckBatch(op, path, BATCH_OPERATION_KEYS) : [parseAckItem(op, path, undefined, ACK_OPERATION_KEYS)],
      };
    }
    throw badRequest('invalid_request', `${path}.type must be "ack" or "push".`);
  });
}
