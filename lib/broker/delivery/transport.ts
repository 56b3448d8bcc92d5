// What the two delivery transports share (endpoint.ts's fetch on workerd, endpoint-node.ts's
// node:http on Node): the request, the raw answer, and the 1 MiB bound on reading it.

export interface DeliveryRequest {
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

export const MAX_ANSWER_BYTES = 1024 * 1024;

/** What a transport hands back: the status, Retry-After, and the body up to MAX_ANSWER_BYTES. */
export interface RawAnswer {
  status: number;
  retryAfter: string | null;
  body: Uint8Array;
  truncated: boolean;
}

export function joinChunks(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(Math.min(size, MAX_ANSWER_BYTES + 1));
  let at = 0;
  for (const c of chunks) {
    const part = c.subarray(0, out.length - at);
    out.set(part, at);
    at += part.length;
    if (at >= out.length) break;
  }
  return out;
}
