// Answers of the hot routes (push, pop, ack) with plain header objects: @hono/node-server writes
// those straight to the socket, while a `Headers` instance (what c.header() before the handler makes)
// takes its slower path. Every API answer carries Cache-Control: no-store (lib/http/app.ts).
const answered = new WeakSet<Response>();

/** Routes whose handlers answer through jsonAnswer/emptyAnswer: app.ts sets no header before them. */
export const FAST_PATHS = /^\/api\/v1\/(push|pop|ack)(\/|$)/;

export function jsonAnswer(text: string, status = 200, contentType = 'application/json'): Response {
  const res = new Response(text, { status, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
  answered.add(res);
  return res;
}

export function emptyAnswer(status: number): Response {
  const res = new Response(null, { status, headers: { 'cache-control': 'no-store' } });
  answered.add(res);
  return res;
}

/** Built by jsonAnswer/emptyAnswer, so it already says no-store. */
export const isAnswered = (res: Response) => answered.has(res);
