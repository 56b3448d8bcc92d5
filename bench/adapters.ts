// What a single-message push request costs in CPU in each deployed adapter, over a database stub
// that answers push_segments at once (so PostgreSQL and the driver are not in it), in this process,
// one request at a time: the app alone, the app with JWT auth as every deployed function runs it,
// the Lambda adapter (a function URL's event in, its result out) and the Workers adapter, as
// lib/http/runtime/lambda.ts and workers.ts compose them. Also the two costs this benchmark found:
// building the app for every request (the Worker did) and verifying with the secret's bytes
// rather than an imported key (jose imports them again on every call).
//   npx tsx bench/adapters.ts              (BENCH_REQUESTS, default 20000; BENCH_ROUNDS, default 3)
import { SignJWT, jwtVerify } from 'jose';
import { handle } from 'hono/aws-lambda';
import { allFunctions } from '../functions/index.js';
import { readConfig } from '../lib/config.js';
import type { Database } from '../lib/db/types.js';
import { buildApp } from '../lib/http/app.js';
import { buildDeployedApp } from '../lib/http/runtime/deployed.js';
import { median } from './lib/load.js';

const N = Number(process.env.BENCH_REQUESTS ?? 20000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BODY = JSON.stringify({ items: [{ queue: 'bench', partition: '7', payload: { message: 'Hello World', partition_id: 7 } }] });
const SECRET = 'bench-secret-'.padEnd(44, 'x');
const secretBytes = new TextEncoder().encode(SECRET);
const token = await new SignJWT({ tenant: 'default', role: 'read-write' })
  .setProtectedHeader({ alg: 'HS256' })
  .setIssuedAt()
  .setExpirationTime('2h')
  .sign(secretBytes);
// Distinct tokens, for the cost of a token this instance has not verified before.
const fresh = await Promise.all(
  Array.from({ length: N }, (_, i) =>
    new SignJWT({ tenant: 'default', role: 'read-write', jti: String(i) })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('2h')
      .sign(secretBytes),
  ),
);
let nextFresh = 0;
const hmacKey = await crypto.subtle.importKey('raw', secretBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

let offset = 0;
const stub: Database = {
  driver: 'pg',
  query: async <R>(text: string) =>
    (text.includes('push_segments')
      ? [{ kind: 'ok', grp: 0, item: null, partition_id: '12', msg_offset: null, base_offset: String(offset++), blob: null }]
      : []) as R[],
  transaction: async (fn) => fn(stub),
  close: async () => {},
};
const env = { JWT_SECRET: SECRET };
const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
const request = () => new Request('https://queen.example/api/v1/push', { method: 'POST', body: BODY, headers });
const host = 'abc.lambda-url.us-east-1.on.aws';
// A function URL's event (payload 2.0), body base64 as function URLs send it.
const event = () => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: '/api/v1/push',
  rawQueryString: '',
  headers: { ...headers, host },
  requestContext: {
    accountId: 'anonymous',
    apiId: 'abc',
    domainName: host,
    domainPrefix: 'abc',
    http: { method: 'POST', path: '/api/v1/push', protocol: 'HTTP/1.1', sourceIp: '203.0.113.1', userAgent: 'bench' },
    requestId: 'bench',
    routeKey: '$default',
    stage: '$default',
    time: '02/Dec/2026:00:00:00 +0000',
    timeEpoch: 0,
  },
  body: Buffer.from(BODY).toString('base64'),
  isBase64Encoded: true,
});

const noAuth = buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => stub });
const deployed = buildDeployedApp(allFunctions, env, async () => stub);
const lambda = handle(deployed);
// workers.ts: one app per bindings object, the request's pool and waitUntil in c.env.
const workerScope = { database: async () => stub, delivery: { waitUntil: () => {}, open: async () => stub } };

// Every push must be answered 201, or the figure would be an error path's.
const push = (name: string, send: () => Promise<Response | { statusCode?: number }>, calls = N) => ({
  name,
  calls,
  run: async () => {
    const r = await send();
    const code = 'status' in r ? r.status : r.statusCode;
    if (code !== 201) throw new Error(`${name}: answered ${code}`);
  },
});
const CASES: { name: string; run: () => Promise<unknown>; calls: number }[] = [
  push('the app (buildApp), auth off', async () => noAuth.fetch(request())),
  push('+ JWT HS256, as deployed (buildDeployedApp)', async () => deployed.fetch(request())),
  push('+ JWT HS256, a token not seen before every request', async () =>
    deployed.fetch(
      new Request('https://queen.example/api/v1/push', {
        method: 'POST',
        body: BODY,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${fresh[nextFresh++ % fresh.length]}` },
      }),
    ),
  ),
  push('Lambda: handle(app), a function URL event', async () => lambda(event() as never, {} as never)),
  push('Workers: one app per isolate, the request in c.env', async () => deployed.fetch(request(), workerScope)),
  // Building an app is slow: fewer of those.
  push(
    'Workers before: the app built for every request',
    async () => buildDeployedApp(allFunctions, env, async () => stub).fetch(request()),
    Math.ceil(N / 10),
  ),
  {
    name: "jose jwtVerify with the secret's bytes (before)",
    run: () => jwtVerify(token, secretBytes, { algorithms: ['HS256'] }),
    calls: N,
  },
  { name: 'jose jwtVerify with the imported HMAC key (now)', run: () => jwtVerify(token, hmacKey, { algorithms: ['HS256'] }), calls: N },
];

async function cpuPerCall(run: () => Promise<unknown>, n: number): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await run();
  const c = process.cpuUsage(t0);
  return (c.user + c.system) / n;
}

const results = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
for (const { run, calls } of CASES) await cpuPerCall(run, Math.min(calls, 2000)); // warm the JIT
for (let round = 0; round < ROUNDS; round++) {
  for (const { name, run, calls } of CASES) results.get(name)!.push(await cpuPerCall(run, calls));
}
console.log(`CPU per single-message push request in one process, database stubbed, median of ${ROUNDS} rounds [min..max]:`);
for (const { name } of CASES) {
  const xs = results.get(name)!.sort((a, b) => a - b);
  console.log(`  ${median(xs).toFixed(1).padStart(7)} µs  [${xs[0]!.toFixed(1)}..${xs.at(-1)!.toFixed(1)}]  ${name}`);
}
