// POST /push bodies (docs/semantics.md#push): {"items": [...]}, each payload kept as the exact JSON
// text the client sent (docs/semantics.md#names-and-limits). Also decodes the push operations of a
// transaction.
import type { Context } from 'hono';
import * as v from 'valibot';
import type { PushItem } from '../../broker/push.js';
import {
  DEFAULT_PARTITION,
  isName,
  isTraceId,
  isTransactionId,
  nameSchema,
  traceIdSchema,
  transactionIdSchema,
} from '../../broker/names.js';
import { badRequest, QueenError, tooLarge } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { isObject, readText, validate } from './body.js';
import { checkKeys, keySet } from './keys.js';
import { parseJsonRaw, RawJson, type JsonPath } from './raw-json.js';

const NULL_PAYLOAD = new TextEncoder().encode('null');
const encoder = new TextEncoder();

// Only items[i].payload is kept as source text; a "payload" key anywhere else is ordinary JSON.
const isItem = (path: JsonPath) => path.length === 2 && path[0] === 'items' && typeof path[1] === 'number';

const itemSchema = v.looseObject({
  queue: nameSchema('queue'),
  partition: v.optional(v.nullable(nameSchema('partition'))),
  transactionId: v.optional(v.nullable(transactionIdSchema)),
  traceId: v.optional(v.nullable(traceIdSchema)),
});

// What Queen's clients send in an item (test/http/client-shapes.test.ts); producerSub is read from
// the token, never the body (docs/semantics.md#push), but a client that sends it is not refused.
export const PUSH_ITEM_KEYS = keySet(['queue', 'partition', 'payload', 'transactionId', 'traceId', 'producerSub'], {
  required: ['queue'],
  hints: {
    data: 'payload',
    message: 'payload',
    body: 'payload',
    value: 'payload',
    id: 'transactionId',
    messageId: 'transactionId',
    key: 'partition',
    partitionKey: 'partition',
  },
});
const PUSH_BODY_KEYS = keySet(['items']);

export async function readPushRequest(c: Context<BrokerEnv>): Promise<PushItem[]> {
  const body = parseJsonRaw(await readText(c), { member: 'payload', where: isItem });
  if (!isObject(body)) throw badRequest('invalid_request', 'Request body must be a JSON object {"items": [...]}');
  checkKeys(body, PUSH_BODY_KEYS, 'the body');
  return parsePushItems(body.items, c.get('config'));
}

/**
 * Checks raw items (payloads as RawJson, or any JSON value, which is then re-serialised) and
 * returns them ready for pushItems. `path` names the array in messages, e.g. 'items' or
 * 'operations[2].items'. Throws 400 naming the item index and field, 413 for an oversized payload.
 */
export function parsePushItems(raw: unknown, limits: { maxMessageBytes: number }, path = 'items'): PushItem[] {
  if (!Array.isArray(raw)) {
    throw badRequest(
      'invalid_request',
      `${path} is required and must be an array of {queue, partition?, payload, transactionId?, traceId?}`,
    );
  }
  const items = new Array<PushItem>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const at = `${path}[${i}]`;
    const item: unknown = raw[i];
    if (!isObject(item)) throw badRequest('invalid_item', `${at} must be an object with at least "queue" and "payload"`);
    checkKeys(item, PUSH_ITEM_KEYS, at);
    if (!looksValid(item)) validate(itemSchema, item, 'invalid_item', at);
    const payload = payloadBytes(item.payload, at);
    if (payload.length > limits.maxMessageBytes) {
      throw tooLarge(
        'message_too_large',
        `${at}.payload is ${payload.length} bytes; one message may hold at most ${limits.maxMessageBytes} (QUEEN_MAX_MESSAGE_BYTES)`,
      );
    }
    items[i] = {
      queue: item.queue as string,
      partition: (item.partition as string | null | undefined) ?? DEFAULT_PARTITION,
      payload,
      transactionId: (item.transactionId as string | null | undefined) ?? null,
      traceId: typeof item.traceId === 'string' ? item.traceId.toLowerCase() : null,
    };
  }
  return items;
}

// The common case checked without valibot; anything that fails here goes through itemSchema.
function looksValid(f: Record<string, unknown>): boolean {
  return (
    isName(f.queue) &&
    (f.partition == null || isName(f.partition)) &&
    (f.transactionId == null || isTransactionId(f.transactionId)) &&
    (f.traceId == null || isTraceId(f.traceId))
  );
}

function payloadBytes(payload: unknown, at: string): Uint8Array {
  if (payload instanceof RawJson) return encoder.encode(payload.text);
  if (payload === undefined) return NULL_PAYLOAD;
  const text = JSON.stringify(payload);
  if (text === undefined) throw new QueenError(400, 'invalid_item', `${at}.payload must be a JSON value`);
  return encoder.encode(text);
}
