// One error type for every refusal: the server's status and stable code, and how long it asked
// us to wait.
import type { AckResult } from './wire.js';

export class QueenError extends Error {
  override name = 'QueenError';
  constructor(
    /** The HTTP status; 0 when no answer came (network error, timeout). */
    readonly status: number,
    /** The server's stable code (docs/api.md#errors), or `network_error`, `timeout`, `ack_refused`, … */
    readonly code: string,
    message: string,
    /** Seconds from a Retry-After header, else null. */
    readonly retryAfter: number | null = null,
    /** The parsed answer, when there was one. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** A 200 ack answer in which some items were refused (`success:false`): they were not applied. */
export class AckError extends QueenError {
  override name = 'AckError';
  constructor(readonly results: AckResult[]) {
    const refused = results.filter((r) => !r.success);
    super(
      200,
      'ack_refused',
      `${refused.length} of ${results.length} acks refused: ${refused.map((r) => `${r.transactionId}: ${r.error}`).join('; ')}`,
      null,
      results,
    );
  }
  get refused(): AckResult[] {
    return this.results.filter((r) => !r.success);
  }
}
