// The one error type: an HTTP status, a stable code, and a message that says what to do next.
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 500 | 501 | 503;

export class QueenError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueenError';
  }
}

export const badRequest = (code: string, message: string) => new QueenError(400, code, message);
export const notFound = (code: string, message: string) => new QueenError(404, code, message);
export const tooLarge = (code: string, message: string) => new QueenError(413, code, message);
export const notSupported = (message: string) => new QueenError(501, 'not_supported', message);

/** SQLSTATE codes we react to (PostgreSQL manual, appendix A). */
export const SqlState = {
  /** Class 08, connection exception: a prefix, not one code. */
  CONNECTION_EXCEPTION_CLASS: '08',
  TOO_MANY_CONNECTIONS: '53300',
  DEADLOCK_DETECTED: '40P01',
  SERIALIZATION_FAILURE: '40001',
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
  UNDEFINED_TABLE: '42P01',
  INVALID_SCHEMA_NAME: '3F000',
} as const;

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A deadlock victim or a serialization failure: rolled back whole, safe to run again. */
export function isLockConflict(err: unknown): boolean {
  const code = sqlState(err);
  return code === SqlState.DEADLOCK_DETECTED || code === SqlState.SERIALIZATION_FAILURE;
}
