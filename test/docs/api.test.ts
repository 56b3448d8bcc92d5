// docs/api.md is held to the app: its route table lists exactly the routes the function families
// register (and /health), each with its family and the least role it needs (test/auth/routes.ts,
// which the role matrix holds to the app), and its environment table every variable the code reads.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import type { BrokerEnv } from '../../lib/http/context.js';
import { describeRoute, ROUTES } from '../auth/routes.js';
import { root } from '../support/server.js';

const api = () => readFile(join(root, 'docs/api.md'), 'utf8');

// | `GET` | `/api/v1/pop/queue/:queue` | pop | read-write | …
const ROUTE_ROW = /^\| `(GET|POST|PATCH|DELETE)` \| `([^`]+)` \| ([a-z]+) \| ([a-z-]+) \|/gm;

function registeredRoutes(): string[] {
  const rows = allFunctions.flatMap((fn) => {
    const app = new Hono<BrokerEnv>();
    fn.routes(app);
    return app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => {
        const known = ROUTES.find((route) => describeRoute(route) === `${r.method} ${r.path}`);
        return `${r.method} ${r.path} ${fn.name} ${known?.role ?? '(not in test/auth/routes.ts)'}`;
      });
  });
  // buildApp serves /health on every family, without a token.
  return [...new Set(['GET /health every open', ...rows])].sort();
}

// The variables a deployment or an operator sets: read through readConfig's int(env, 'X', …) or
// flag(env, 'X'), as env.X / process.env.X, named by a job's scheduleVar/intervalVar, or by the CLI.
const SOURCES = [
  'lib/config.ts',
  'lib/jobs.ts',
  'lib/http/runtime/delivery-trigger.ts',
  'server.ts',
  'sst.config.ts',
  'cli/main.ts',
  'cli/smoke.ts',
  'cli/token.ts',
  'cli/database.ts',
];
const READ =
  /\b(?:env|process\.env)\.([A-Z][A-Z0-9_]+)|\b(?:int|flag)\(env, '([A-Z][A-Z0-9_]+)'|\b(?:schedule|interval)Var: '([A-Z][A-Z0-9_]+)'/g;

describe('docs/api.md', () => {
  it('lists every registered route with its family and role, and no route the app does not serve', async () => {
    const documented = [...(await api()).matchAll(ROUTE_ROW)].map(
      ([, method, path, family, role]) => `${method} ${path} ${family} ${role}`,
    );
    expect(documented.sort()).toEqual(registeredRoutes());
  });

  it('documents every environment variable the functions, the local server, sst.config.ts and the CLI read', async () => {
    const doc = await api();
    const read = new Set<string>();
    for (const file of SOURCES) {
      for (const [, a, b, c] of (await readFile(join(root, file), 'utf8')).matchAll(READ)) read.add((a ?? b ?? c)!);
    }
    expect(read.size).toBeGreaterThan(15);
    const missing = [...read].filter((name) => !new RegExp(`^\\| \`${name}\``, 'm').test(doc) && !doc.includes(`\`, \`${name}\``));
    expect(missing).toEqual([]);
  });
});
