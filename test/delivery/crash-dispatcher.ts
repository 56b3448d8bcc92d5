// A dispatcher in its own process, for test/delivery/crash.test.ts to kill with SIGKILL mid-request.
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import { readConfig } from '../../lib/config.js';
import { connect } from '../../lib/db/client.js';

const config = readConfig(process.env, { auth: 'none' });
const db = await connect({ url: config.databaseUrl, driver: 'pg', max: 4 });
process.stdout.write('ready\n');
await runDelivery(db, config, { deadline: Date.now() + 60_000 });
await db.close();
