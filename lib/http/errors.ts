// The one place errors become responses (docs/semantics.md#errors-and-availability). Our QueenError answers as it is; a database
// that is unreachable, starting or shutting down answers 503 with Retry-After; a stored segment
// that does not decode is our 500 with the codec's code. Causes are logged, never sent.
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { UnreadableSegmentError } from '../broker/segments.js';
import { CodecError } from '../codec/errors.js';
import { isLockConflict, QueenError, SqlState, sqlState } from '../errors.js';

export type Log = (message: string, err?: unknown) => void;

export interface ErrorResponse {
  status: ContentfulStatusCode;
  body: { error: string; code: string };
  headers?: Record<string, string>;
}

/** Seconds a client is told to wait after a 503 database_unavailable: a restart takes a few. */
export const RETRY_AFTER_SECONDS = 5;

const UNAVAILABLE: ReadonlySet<string> = new Set([
  SqlState.TOO_MANY_CONNECTIONS,
  SqlState.ADMIN_SHUTDOWN,
  SqlState.CRASH_SHUTDOWN,
  SqlState.CANNOT_CONNECT_NOW,
]);
// Node's codes for a connection refused, reset or never made: no SQLSTATE, same meaning.
const NETWORK_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE']);

/** `where` says which request failed, e.g. `POST /api/v1/ack`. */
export function errorResponse(err: unknown, where: string, log: Log): ErrorResponse {
  if (err instanceof QueenError) return { status: err.status, body: { error: err.message, code: err.code } };
  if (err instanceof HTTPException) return { status: err.status, body: { error: err.message, code: 'http_error' } };
  if (err instanceof UnreadableSegmentError) {
    log(`unreadable segment on ${where}: partition ${err.partitionId}, segment at offset ${err.baseOffset}`, err);
    return {
      status: 500,
      body: { error: 'A stored segment could not be read; it has been logged with its location for the operator.', code: err.code },
    };
  }
  if (err instanceof CodecError) {
    log(`codec error on ${where}`, err);
    return { status: 500, body: { error: 'Internal error; it has been logged.', code: err.code } };
  }
  if (isLockConflict(err)) {
    // Still a deadlock victim after the driver's retries (docs/locking.md#retries): nothing was
    // written, and the same request will go through once the contention passes.
    log(`lock conflict on ${where} after retries`, err);
    return {
      status: 503,
      body: { error: 'The request met a lock conflict in the database and was rolled back; send it again.', code: 'database_conflict' },
      headers: { 'Retry-After': '1' },
    };
  }
  if (isDatabaseUnavailable(err)) {
    log(`database unavailable on ${where}`, err);
    return {
      status: 503,
      body: { error: `The database is unreachable or restarting; retry in ${RETRY_AFTER_SECONDS} seconds.`, code: 'database_unavailable' },
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    };
  }
  log(`unhandled error on ${where}`, err);
  return { status: 500, body: { error: 'Internal error; it has been logged.', code: 'internal_error' } };
}

export function isDatabaseUnavailable(err: unknown): boolean {
  const code = sqlState(err);
  if (code && (UNAVAILABLE.has(code) || NETWORK_CODES.has(code) || code.startsWith(SqlState.CONNECTION_EXCEPTION_CLASS))) return true;
  return /Connection terminated|connect ECONNREFUSED|WebSocket/i.test(String((err as Error)?.message ?? ''));
}
