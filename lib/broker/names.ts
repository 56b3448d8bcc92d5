// The rules for queue, partition, consumer group, namespace and task names and for transactionIds
// (docs/semantics.md#names-and-limits), and the names a request may leave out.
import * as v from 'valibot';

export const MAX_NAME_LENGTH = 255;
export const QUEUE_MODE_GROUP = '__QUEUE_MODE__';
export const DEFAULT_PARTITION = 'Default';

const CONTROL = /[\u0000-\u001f\u007f]/;
const NOT_NAME = /[\u0000-\u001f\u007f/]|^\s|\s$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const nameSchema = (what: string) =>
  v.pipe(
    v.string(`${what} must be a string`),
    v.minLength(1, `${what} must not be empty`),
    v.maxLength(MAX_NAME_LENGTH, `${what} must be at most ${MAX_NAME_LENGTH} characters`),
    v.check((s) => !CONTROL.test(s), `${what} must not contain control characters`),
    v.check((s) => !s.includes('/'), `${what} must not contain "/"`),
    v.check((s) => s.trim() === s, `${what} must not start or end with spaces`),
  );

export const transactionIdSchema = v.pipe(
  v.string('transactionId must be a string'),
  v.minLength(1, 'transactionId must not be empty'),
  v.maxLength(MAX_NAME_LENGTH, `transactionId must be at most ${MAX_NAME_LENGTH} characters`),
  v.check((s) => !s.includes('\u0000'), 'transactionId must not contain U+0000: PostgreSQL text cannot hold it'),
);

export const traceIdSchema = v.pipe(
  v.string('traceId must be a UUID string'),
  v.regex(UUID, 'traceId must be a UUID (8-4-4-4-12 hex digits)'),
);

// The same rules without valibot, for the hot path of push (a tenth of the cost on a batch of
// 100); whatever fails them goes through the schemas above, which say precisely what is wrong.
export const isName = (s: unknown): s is string =>
  typeof s === 'string' && s.length >= 1 && s.length <= MAX_NAME_LENGTH && !NOT_NAME.test(s);
export const isTransactionId = (s: unknown): s is string =>
  typeof s === 'string' && s.length >= 1 && s.length <= MAX_NAME_LENGTH && !s.includes('\u0000');
export const isTraceId = (s: unknown): s is string => typeof s === 'string' && UUID.test(s);
