// Property-based fuzz over every route the app registers (docs/api.md#errors): whatever arrives, the
// answer is a 2xx or a 4xx {error, code}, never a 5xx, and a refused request writes nothing. The
// seed is fixed (QUEEN_FUZZ_SEED overrides it); fast-check prints it with any counterexample.
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tableFingerprint } from '../../support/audit.js';
import { exampleUrl, fuzzProblem, requestsFor, routeKey, routesOf } from '../../support/fuzz.js';
import { examples, makeFixture, NOT_SUPPORTED, staleExamples, unknownRoutes, type Fixture } from '../../support/fuzz-routes.js';
import { inProcess } from '../../support/http.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

const SEED = Number(process.env.QUEEN_FUZZ_SEED || 20260131);
// The full run on the real server; a short one on PGlite, whose every statement is slower.
const RUNS_PER_ROUTE = testMode() === 'pg' ? 100 : 6;

const db = useDatabase();
// Long-polls end at once, so a fuzzed wait=true costs nothing.
const client = testClient(db, { config: { maxWaitMs: 10 } });
const send = inProcess(client.app);
const routes = routesOf(client.app);

describe('fuzzed requests to every route', () => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await makeFixture(send, 'f');
  });

  // A fuzzed {"enabled": true} would leave every later pop answering 204, short of its deep checks.
  afterEach(async () => {
    for (const path of ['/api/v1/system/maintenance', '/api/v1/system/maintenance/pop']) {
      const res = await send('POST', path, '{"enabled":false}');
      if (res.status !== 200) throw new Error(`turning ${path} off answered ${res.status} ${res.text}`);
    }
  });

  it('finds the routes it fuzzes in the app itself', () => {
    expect(routes.map(routeKey)).toEqual(
      expect.arrayContaining(['POST /api/v1/push', 'GET /api/v1/pop/queue/:queue', 'POST /api/v1/configure']),
    );
  });

  it('has a valid example for every route, so a new route without one fails here, and none for a route that is gone', () => {
    expect(unknownRoutes(routes, fixture)).toEqual([]);
    expect(staleExamples(routes, fixture)).toEqual([]);
  });

  // On a fixture of its own, so the fuzz below still finds its dead letters and victims in place.
  it('answers every valid example with a 2xx carrying a body, or 501 not_supported where documented', async () => {
    const own = await makeFixture(send, 'x');
    const wrong: string[] = [];
    const all = examples(own);
    for (const route of routes) {
      const key = routeKey(route);
      for (const e of all[key] ?? []) {
        const url = exampleUrl(route, e);
        const res = await send(route.method, url, e.body === undefined ? undefined : JSON.stringify(e.body));
        const ok = NOT_SUPPORTED.has(key)
          ? res.status === 501 && JSON.parse(res.text).code === 'not_supported'
          : res.status >= 200 && res.status < 300 && res.status !== 204;
        if (!ok) wrong.push(`${key} ${url}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(routes.map((r) => [routeKey(r), r] as const))(
    '%s answers 2xx or 4xx {error, code}, and a 4xx writes nothing',
    async (key, route) => {
      const all = examples(fixture);
      const seedBodies = Object.values(all)
        .flatMap((list) => list.map((e) => e.body))
        .filter((b) => b !== undefined);
      const notSupported = NOT_SUPPORTED.has(key);
      const property = fc.asyncProperty(requestsFor(route, all[key] ?? [], seedBodies), async (req) => {
        const before = await tableFingerprint(db());
        const res = await send(req.method, req.url, req.body);
        const what = `${req.method} ${req.url} (${req.how}) with body ${req.body === undefined ? 'none' : JSON.stringify(req.body.slice(0, 400))}`;
        const problem = fuzzProblem(res, { notSupported });
        if (problem) throw new Error(`${what}: ${problem}`);
        if (req.mustRefuse && res.status < 400)
          throw new Error(`${what}: answered ${res.status}, but that body is not the JSON object the route takes`);
        if (res.status < 400) return;
        const after = await tableFingerprint(db());
        const changed = Object.keys(before).filter((t) => before[t] !== after[t]);
        if (changed.length > 0)
          throw new Error(`${what}: answered ${res.status} ${res.text.slice(0, 200)} but changed ${changed.join(', ')}`);
      });
      await fc.assert(property, { seed: SEED, numRuns: RUNS_PER_ROUTE, endOnFailure: true });
    },
  );
});
