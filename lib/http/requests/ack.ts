// Ack bodies (SPEC §3.3): a single ack or {consumerGroup?, acknowledgments: [...]}; any invalid
// item makes the whole request a 400, so nothing moves. Also lease extend (§3.4) and the
// transaction's operations (§3.5), which mix acks and pushes.
import type { Context } from 'hono';
import * as v from 'valibot';
import type { AckItem, AckStatus } from '../../broker/ack.js';
import { DEFAULT_EXTEND_SECONDS, MAX_EXTEND_SECONDS } from '../../broker/limits.js';
import { nameSchema, QUEUE_MODE_GROUP, transactionIdSchema } from '../../broker/names.js';
import type { Operation, TransactionRequest } from '../../broker/transaction.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { isObject, readJson, readText, validate } from './body.js';
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

export const readAck = async (c: Context<BrokerEnv>): Promise<AckItem[]> => [parseAckItem(await readJson(c), 'body')];

export const readAckBatch = async (c: Context<BrokerEnv>): Promise<AckItem[]> => parseAckBatch(await readJson(c));

/** One ack item; `path` names it in error messages. `group` overrides the item's consumerGroup. */
export function parseAckItem(raw: unknown, path: string, group?: string | null): AckItem {
  if (!isObject(raw)) {
    throw badRequest('invalid_request', `${path} must be an ack object {transactionId, partitionId, status, leaseId?}`);
  }
  const item = validate(itemSchema, raw, 'invalid_request', path);
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
  if (!isObject(raw) || !Array.isArray(raw.acknowledgments)) {
    throw badRequest('invalid_request', `${path} must be {"consumerGroup"?, "acknowledgments": [...]}`);
  }
  const group = raw.consumerGroup === undefined || raw.consumerGroup === null ? null : validate(nameSchema('consumerGroup'), raw.consumerGroup);
  return raw.acknowledgments.map((item, i) => parseAckItem(item, `acknowledgments[${i}]`, group));
}

/** POST /lease/:leaseId/extend: the lease id and {seconds?}; an empty body extends by the default. */
export async function readLeaseExtend(c: Context<BrokerEnv>): Promise<{ leaseId: string; seconds: number }> {
  const seconds = ((await readJson(c, true)) as { seconds?: unknown } | null)?.seconds;
  if (seconds === undefined || seconds === null) return { leaseId: c.req.param('leaseId')!, seconds: DEFAULT_EXTEND_SECONDS };
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_EXTEND_SECONDS) {
    throw badRequest('invalid_request', `seconds must be an integer from 1 to ${MAX_EXTEND_SECONDS}.`);
  }
  return { leaseId: c.req.param('leaseId')!, seconds };
}

// operations[i].items[j].payload is kept as source text, as push keeps it.
const isPushItem = (p: JsonPath) => p.length === 4 && p[0] === 'operations' && p[2] === 'items' && typeof p[3] === 'number';

export async function readTransaction(c: Context<BrokerEnv>): Promise<TransactionRequest> {
  const body = parseJsonRaw(await readText(c), { member: 'payload', where: isPushItem });
  return { operations: parseOperations(body, c.get('config')), requiredLeases: parseRequiredLeases(body) };
}

// Queen's clients list the leases of the messages they ack here, deduplicated; absent is none.
const requiredLeasesSchema = v.optional(v.nullable(v.array(v.string('requiredLeases must be an array of leaseId strings'), 'requiredLeases must be an array of leaseId strings')));

function parseRequiredLeases(body: unknown): string[] {
  const leases = validate(requiredLeasesSchema, (body as { requiredLeases?: unknown } | null)?.requiredLeases, 'invalid_request', 'requiredLeases');
  return (leases ?? []).filter((l) => l !== '');
}

export function parseOperations(body: unknown, limits: { maxMessageBytes: number }): Operation[] {
  const ops = (body as { operations?: unknown } | null)?.operations;
  if (!Array.isArray(ops) || ops.length === 0) {
    throw badRequest('invalid_request', 'A transaction needs "operations": [{"type":"ack",...} | {"type":"push","items":[...]}].');
  }
  return ops.map((op: unknown, i): Operation => {
    const type = (op as { type?: unknown } | null)?.type;
    const path = `operations[${i}]`;
    if (type === 'push') return { type, items: parsePushItems((op as { items?: unknown }).items, limits, `${path}.items`) };
    if (type === 'ack') {
      const batch = Array.isArray((op as { acknowledgments?: unknown }).acknowledgments);
      return { type, items: batch ? parseAckBatch(op, path) : [parseAckItem(op, path)] };
    }
    throw badRequest('invalid_request', `${path}.type must be "ack" or "push".`);
  });
}
