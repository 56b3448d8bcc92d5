// `npm start`: every function on one port, on embedded PGlite in ./.queen unless DATABASE_URL is
// set, with the retention job on a timer. Deployed functions are the same app, one family each.
import { resolve } from 'node:path';
import { allFunctions } from './functions/index.js';
import runScheduledRetention from './functions/retention.js';
import { readConfig } from './lib/config.js';
import { connect } from './lib/db/client.js';
import { migrate } from './lib/db/migrate.js';
import { buildApp } from './lib/http/app.js';
import { authenticate } from './lib/http/auth.js';
import { serveNode } from './lib/http/runtime/node.js';
import { startRetentionLoop } from './lib/http/runtime/retention-loop.js';

const env = process.env;
const config = readConfig(env, { auth: 'none' });
const port = Number(env.PORT || 6632);
// With auth off every caller is an admin: stay on loopback unless HOST says otherwise.
const host = env.HOST || (config.auth === 'none' ? '127.0.0.1' : '0.0.0.0');
const retentionMs = Number(env.RETENTION_INTERVAL || 60_000);
const dataDir = resolve('.queen');
const log = (message: string, err?: unknown) => (err === undefined ? console.log(message) : console.error(message, err));

const db = await connect(config.databaseUrl ? { url: config.databaseUrl } : { dataDir });
const applied = await migrate(db);
const app = buildApp(allFunctions, {
  config,
  database: () => db,
  authenticate: config.auth === 'jwt' ? authenticate : undefined,
});
const server = await serveNode(app, port, host);
const retention = startRetentionLoop(() => runScheduledRetention(db), retentionMs, log);

console.log(
  [
    `queen listening on ${server.url} (database: ${config.databaseUrl ? `${db.driver} at ${new URL(config.databaseUrl).host}` : `PGlite in ${dataDir}`}; ${applied} migration(s) applied)`,
    config.auth === 'none' ? 'auth is OFF (QUEEN_AUTH=none): every caller is an admin of the default tenant' : 'auth is ON (QUEEN_AUTH=jwt)',
    `retention runs every ${retentionMs} ms`,
    `try: curl -X POST ${server.url}/api/v1/push -H 'content-type: application/json' -d '{"items":[{"queue":"demo","payload":{"hello":"world"}}]}'`,
    `then: curl '${server.url}/api/v1/pop/queue/demo?batch=10'`,
  ].join('\n'),
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) {
    log(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  log(`${signal}: finishing in-flight requests`);
  await server.close();
  await retention.stop();
  await db.close();
  log('stopped cleanly');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
