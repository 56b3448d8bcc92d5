// Builds one Hono app from route families: CORS when configured, errors, /health, database and principal per request.
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { QueenError } from '../errors.js';
import type { AfterPush, BrokerEnv, Principal, QueenFunction } from './context.js';
import { corsMiddleware } from './cors.js';
import { DEFAULT_TENANT } from './context.js';
import { errorResponse, type Log } from './errors.js';
import { FAST_PATHS, isAnswered } from './respond.js';

export const VERSION = '0.1.0';

export interface AppOptions {
  config: Config;
  /** The database for this request; on workerd a fresh pool per request (lib/http/runtime/workers.ts). */
  database: (c: Context<BrokerEnv>) => Database | Promise<Database>;
  /** Who is calling; the default (auth off) is an admin of the default tenant. */
  authenticate?: (req: Request, config: Config) => Promise<Principal>;
  log?: Log;
  /** Starts delivery after a push commits (lib/http/runtime/delivery-trigger.ts); none by default. */
  afterPush?: AfterPush;
}

const anonymousAdmin: Principal = { tenant: DEFAULT_TENANT, sub: null, role: 'admin' };
const noTrigger: AfterPush = async () => {};

export function buildApp(functions: QueenFunction[], options: AppOptions): Hono<BrokerEnv> {
  const log = options.log ?? ((m, e) => console.error(m, e));
  const app = new Hono<BrokerEnv>();
  // Off unless configured: then no CORS code runs on any request (docs/api.md#cors).
  if (options.config.corsOrigins) app.use('*', corsMiddleware(options.config.corsOrigins));

  app.get('/health', async (c) => {
    try {
      const db = await options.database(c);
      await db.query('SELECT 1');
      return c.json({ status: 'healthy', database: 'connected', version: VERSION });
    } catch (err) {
      log('health check failed', err);
      // Say why, as every error does: an unmigrated schema or a missing DATABASE_URL is not a
      // network outage, and a database that is away comes with its Retry-After.
      const { body, headers } = errorResponse(err, 'GET /health', () => {});
      const database = err instanceof QueenError && err.code.startsWith('schema_') ? 'connected' : 'disconnected';
      return c.json({ status: 'unhealthy', database, version: VERSION, ...body }, 503, headers);
    }
  });

  // Everything but /health: the API, and the metrics and streams paths Queen serves outside it.
  const perRequest: MiddlewareHandler<BrokerEnv> = async (c, next) => {
    // A pop takes a lease: no CDN or proxy in front of a function may ever replay a response.
    // The hot routes' answers carry it already (lib/http/respond.ts); anything else gets it here.
    const fast = FAST_PATHS.test(c.req.path);
    if (!fast) c.header('Cache-Control', 'no-store');
    c.set('config', options.config);
    c.set('principal', options.authenticate ? await options.authenticate(c.req.raw, options.config) : anonymousAdmin);
    c.set('db', await options.database(c));
    c.set('afterPush', options.afterPush ?? noTrigger);
    await next();
    if (fast && !isAnswered(c.res)) c.header('Cache-Control', 'no-store');
  };
  // '/metrics/*' also matches /metrics itself.
  for (const path of ['/api/*', '/metrics/*', '/streams/*']) app.use(path, perRequest);

  for (const fn of functions) fn.routes(app);

  app.notFound((c) =>
    c.json({ error: `No route ${c.req.method} ${c.req.path}; see docs/api.md for the routes.`, code: 'route_not_found' }, 404),
  );
  app.onError((err, c) => {
    const { status, body, headers } = errorResponse(err, `${c.req.method} ${c.req.path}`, log);
    return c.json(body, status, headers);
  });
  return app;
}
