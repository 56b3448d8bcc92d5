// CORS for browser clients, on only when QUEEN_CORS_ORIGINS is set (docs/api.md#cors). The
// headers go in before the handler runs, through c.header, so the handler's own Response carries
// them: setting them on c.res (as hono/cors does) builds and then copies a second Response.
import type { MiddlewareHandler } from 'hono';

const ALLOW_METHODS = 'GET, POST, PATCH, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Authorization, Content-Type';

export function corsMiddleware(origins: '*' | readonly string[]): MiddlewareHandler {
  const listed = origins === '*' ? null : new Set(origins);
  return async (c, next) => {
    const origin = c.req.header('origin');
    const allow = listed === null ? '*' : origin !== undefined && listed.has(origin) ? origin : null;
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
      // A preflight from an origin not listed gets no Allow-Origin: the browser then refuses.
      const headers: Record<string, string> = {
        'Access-Control-Allow-Methods': ALLOW_METHODS,
        'Access-Control-Allow-Headers': ALLOW_HEADERS,
        'Access-Control-Max-Age': '86400',
      };
      if (allow) headers['Access-Control-Allow-Origin'] = allow;
      if (listed) headers.Vary = 'Origin';
      return c.body(null, 204, headers);
    }
    const headers: [string, string][] = [];
    if (allow) {
      // A browser client must see Retry-After to back off as a 503 or 429 asks.
      headers.push(['Access-Control-Allow-Origin', allow], ['Access-Control-Expose-Headers', 'Retry-After']);
    }
    if (listed) headers.push(['Vary', 'Origin']);
    for (const [name, value] of headers) c.header(name, value);
    await next();
    // The hot routes answer with a Response of their own (lib/http/respond.ts), which the headers
    // set above do not reach: add them to it.
    if (headers.length > 0 && !c.res.headers.has(headers[0]![0])) for (const [name, value] of headers) c.res.headers.set(name, value);
  };
}
