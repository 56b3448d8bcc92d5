// The whole broker as one Hono app over a test database, driven with real HTTP requests.
import { allFunctions } from '../../functions/index.js';
import { readConfig, type Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/types.js';
import { buildApp, type AppOptions } from '../../lib/http/app.js';

export interface TestAppOptions {
  config?: Partial<Config>;
  authenticate?: AppOptions['authenticate'];
}

export function testApp(db: Database, options: TestAppOptions = {}) {
  const config = { ...readConfig({}, { auth: 'none' }), ...options.config };
  const app = buildApp(allFunctions, {
    config,
    database: () => db,
    authenticate: options.authenticate,
    log: () => {},
  });
  return {
    app,
    config,
    /** Sends a request; a non-string body is sent as JSON. Returns status and parsed JSON (or null). */
    async call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      const res = await app.request(path, init);
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : null) as T, text, headers: res.headers };
    },
  };
}
