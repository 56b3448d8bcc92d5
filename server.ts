// `npm start`: every function on one port, on embedded PGlite in ./.queen unless DATABASE_URL is
// set, with the scheduled jobs (lib/jobs.ts) on timers and delivery started in process after each
// push to a subscribed queue. Deployed functions are the same app, one family each.
import { resolve } from 'node:path';
import { allFunctions } from './functions/index.js';
import { JOB_RUNS } from './functions/jobs.js';
import { readConfig, weakJwtSecret } from './lib/config.js';
import { connect, databaseHost } from './lib/db/client.js';
import type { Database } from './lib/db/types.js';
import { MigrationError, migrateWithReport } from './lib/db/migrate.js';
import { buildApp } from './lib/http/app.js';
import { authenticate } from './lib/http/auth.js';
import { DataDirLocked, lockDataDir, type DataDirLock } from './lib/http/runtime/data-dir-lock.js';
import { localDeliveryTrigger } from './lib/http/runtime/delivery-trigger.js';
import { startJobLoop } from './lib/http/runtime/job-loop.js';
import { onStopSignals, serveNode, type NodeServer } from './lib/http/runtime/node.js';
import { JOBS, jobInterval, jobLabel, localRunMs } from './lib/jobs.js';

const env = process.env;
const config = readConfig(env, { auth: 'none' });
const port = Number(env.PORT || 6632);
// With auth off every caller is an admin: stay on loopback unless HOST says otherwise.
const host = env.HOST || (config.auth === 'none' ? '127.0.0.1' : '0.0.0.0');
const jobs = JOBS.flatMap((job) => {
  const intervalMs = jobInterval(job, env);
  return intervalMs === null ? [] : [{ job, intervalMs }];
});
const dataDir = resolve('.queen');
const log = (message: string, err?: unknown) => (err === undefined ? console.log(message) : console.error(message, err));

let lock: DataDirLock | undefined;
// eslint-disable-next-line prefer-const -- refuse() reads it before it is set, where a const would throw (TDZ).
let db: Database | undefined;

/** Start-up problems an operator can fix: one line that says what to do, no stack. */
async function refuse(message: string): Promise<never> {
  console.error(message);
  await db?.close();
  lock?.release();
  process.exit(1);
}

const weakSecret = config.auth === 'jwt' && config.jwt.secret ? weakJwtSecret(config.jwt.secret) : undefined;
if (weakSecret) await refuse(`queen: ${weakSecret}`);

if (!config.databaseUrl) {
  try {
    lock = lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLocked) await refuse(err.message);
    throw err;
  }
  if (lock.staleOwner) log(`took over the lock of server pid ${lock.staleOwner}, which is no longer running`);
}
db = await connect(config.databaseUrl ? { url: config.databaseUrl, preparedStatements: config.preparedStatements } : { dataDir });
const migrated = await migrateWithReport(db).catch((err: unknown) =>
  err instanceof MigrationError ? refuse(err.message) : Promise.reject(err),
);
const delivery = localDeliveryTrigger(db, config, log);
const app = buildApp(allFunctions, {
  config,
  database: () => db!,
  authenticate: config.auth === 'jwt' ? authenticate : undefined,
  afterPush: delivery.afterPush,
});
const server: NodeServer = await serveNode(app, port, host).catch((err: NodeJS.ErrnoException) =>
  err.code === 'EADDRINUSE'
    ? refuse(`queen: port ${port} on ${host} is already in use; stop what listens there, or pick another port: PORT=${port + 1} npm start`)
    : Promise.reject(err),
);
// A run starts work for localRunMs (the delivery sweep stops claiming then); stop() cuts it short.
const loop = startJobLoop(
  jobs.map(({ job, intervalMs }) => ({
    name: jobLabel(job),
    intervalMs,
    run: (signal) => JOB_RUNS[job.name](db!, config, Date.now() + localRunMs(intervalMs), log, signal),
  })),
  log,
);

// Before the banner: whoever reads it may signal at once.
onStopSignals(async (reason) => {
  log(`${reason}: finishing in-flight requests`);
  await server.close();
  await loop.stop();
  await delivery.stop();
  await db!.close();
  lock?.release();
  log('stopped cleanly');
}, log);

const repaired =
  (migrated.repaired.length ? `; brought ${migrated.repaired.join(', ')} up to date` : '') +
  (migrated.ahead ? `; the database is ${migrated.ahead} migration(s) ahead of this version, a newer release migrated it` : '');
// With auth on, the examples carry a token: a curl without one would only show a 401.
const bearer = config.auth === 'jwt' ? ` -H "authorization: Bearer $TOKEN"` : '';
console.log(
  [
    `queen listening on ${server.url} (database: ${config.databaseUrl ? `${db.driver} at ${databaseHost(config.databaseUrl)}` : `PGlite in ${dataDir}`}; ${migrated.applied.length} migration(s) applied${repaired})`,
    config.auth === 'none'
      ? 'auth is OFF (QUEEN_AUTH=none): every caller is an admin of the default tenant'
      : 'auth is ON (QUEEN_AUTH=jwt): every route but /health needs a bearer token',
    jobs.length ? jobs.map(({ job, intervalMs }) => `${jobLabel(job)} runs every ${intervalMs} ms`).join(', ') : 'no scheduled jobs',
    ...(config.auth === 'jwt'
      ? ['first: export TOKEN=$(npx queen-serverless token --role admin)   # signed with the same JWT_SECRET']
      : []),
    `try: curl -X POST ${server.url}/api/v1/push${bearer} -H 'content-type: application/json' -d '{"items":[{"queue":"demo","payload":{"hello":"world"}}]}'`,
    `then: curl${bearer} '${server.url}/api/v1/pop/queue/demo?batch=10'`,
  ].join('\n'),
);
