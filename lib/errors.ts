// The one error type: an HTTP status, a stable code, and a message that says what to do next.
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503;

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

/** SQLSTATE codes the broker reacts to. */
export const SqlState = {
  UNIQUE_VIOLATION: '23505',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  UNDEFINED_TABLE: '42P01',
  INVALID_SCHEMA_NAME: '3F000',
  UNDEFINED_FUNCTION: '42883',
  RAISE_EXCEPTION: 'P0001',
} as const;

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
