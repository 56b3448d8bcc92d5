// Validation of push items (SPEC §1, §3.1), shared by POST /push and the transaction route.
import * as v from 'valibot';
import { badRequest, QueenError, tooLarge } from '../errors.js';
import { DEFAULT_PARTITION, nameSchema, transactionIdSchema } from '../http/names.js';
import { RawJson } from '../http/raw-json.js';

export interface PushItem {
  queue: string;
  partition: string;
  /** The payload's JSON text as UTF-8 bytes, stored verbatim (plaintext; push encrypts if the queue says so). */
  payload: Uint8Array;
  /** Null: the minted message id is used. */
  transactionId: string | null;
  traceId: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NULL_PAYLOAD = new TextEncoder().encode('null');
const encoder = new TextEncoder();

const itemSchema = v.looseObject({
  queue: nameSchema('queue'),
  partition: v.optional(v.nullable(nameSchema('partition'))),
  transactionId: v.optional(v.nullable(transactionIdSchema)),
  traceId: v.optional(
    v.nullable(v.pipe(v.string('traceId must be a UUID string'), v.regex(UUID, 'traceId must be a UUID (8-4-4-4-12 hex digits)'))),
  ),
});

/**
 * Checks raw items (payloads as RawJson, or any JSON value, which is then re-serialised) and
 * returns them ready for pushItems. `path` names the array in messages, e.g. 'items' or
 * 'operations[2].items'. Throws 400 naming the item index and field, 413 for an oversized payload.
 */
export function parsePushItems(raw: unknown, limits: { maxMessageBytes: number }, path = 'items'): PushItem[] {
  if (!Array.isArray(raw)) {
    throw badRequest('invalid_request', `${path} is required and must be an array of {queue, partition?, payload, transactionId?, traceId?}`);
  }
  const items = new Array<PushItem>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const at = `${path}[${i}]`;
    const item: unknown = raw[i];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw badRequest('invalid_item', `${at} must be an object with at least "queue" and "payload"`);
    }
    const fields = item as { queue?: unknown; partition?: unknown; transactionId?: unknown; traceId?: unknown; payload?: unknown };
    if (!looksValid(fields)) {
      const result = v.safeParse(itemSchema, item);
      if (!result.success) {
        const issue = result.issues[0]!;
        const field = v.getDotPath(issue);
        throw badRequest('invalid_item', `${at}${field ? `.${field}` : ''}: ${issue.message}`);
      }
    }
    const payload = payloadBytes((item as { payload?: unknown }).payload, at);
    if (payload.length > limits.maxMessageBytes) {
      throw tooLarge(
        'message_too_large',
        `${at}.payload is ${payload.length} bytes; one message may hold at most ${limits.maxMessageBytes} (QUEEN_MAX_MESSAGE_BYTES)`,
      );
    }
    items[i] = {
      queue: fields.queue as string,
      partition: (fields.partition as string | null | undefined) ?? DEFAULT_PARTITION,
      payload,
      transactionId: (fields.transactionId as string | null | undefined) ?? null,
      traceId: typeof fields.traceId === 'string' ? fields.traceId.toLowerCase() : null,
    };
  }
  return items;
}

// The common case checked without valibot (a tenth of the cost on a batch of 100); anything
// that fails here goes through itemSchema, which says precisely what is wrong.
function looksValid(f: { queue?: unknown; partition?: unknown; transactionId?: unknown; traceId?: unknown }): boolean {
  return (
    isName(f.queue) &&
    (f.partition == null || isName(f.partition)) &&
    (f.transactionId == null || (typeof f.transactionId === 'string' && f.transactionId.length >= 1 && f.transactionId.length <= 255)) &&
    (f.traceId == null || (typeof f.traceId === 'string' && UUID.test(f.traceId)))
  );
}

// eslint-disable-next-line no-control-regex
const NOT_NAME = /[\u0000-\u001f\u007f/]|^\s|\s$/;

function isName(s: unknown): s is string {
  return typeof s === 'string' && s.length >= 1 && s.length <= 255 && !NOT_NAME.test(s);
}

function payloadBytes(payload: unknown, at: string): Uint8Array {
  if (payload instanceof RawJson) return encoder.encode(payload.text);
  if (payload === undefined) return NULL_PAYLOAD;
  const text = JSON.stringify(payload);
  if (text === undefined) throw new QueenError(400, 'invalid_item', `${at}.payload must be a JSON value`);
  return encoder.encode(text);
}
