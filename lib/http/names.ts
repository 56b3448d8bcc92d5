// SPEC §1: queue, partition, consumer group, namespace and task names.
import * as v from 'valibot';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export const nameSchema = (what: string) =>
  v.pipe(
    v.string(`${what} must be a string`),
    v.minLength(1, `${what} must not be empty`),
    v.maxLength(255, `${what} must be at most 255 characters`),
    v.check((s) => !CONTROL.test(s), `${what} must not contain control characters`),
    v.check((s) => !s.includes('/'), `${what} must not contain "/"`),
    v.check((s) => s.trim() === s, `${what} must not start or end with spaces`),
  );

export const transactionIdSchema = v.pipe(
  v.string('transactionId must be a string'),
  v.minLength(1, 'transactionId must not be empty'),
  v.maxLength(255, 'transactionId must be at most 255 characters'),
);

export const QUEUE_MODE_GROUP = '__QUEUE_MODE__';
export const DEFAULT_PARTITION = 'Default';
