// docs/semantics.md#errors-and-availability for real: the broker's own PostgreSQL
// restarts under a steady load of pushes, pops and acks, first with `-m fast`, then `-m immediate`.
// Every failed request is a 503 database_unavailable with Retry-After, nothing acknowledged is
// lost, and the same server process serves again once PostgreSQL is back: its pool drops dead
// clients by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { readConfig } from '../../lib/config.js';
import { connect } from '../../lib/db/client.js';
import type { Database } from '../../lib/db/types.js';
import { migrate } from '../../lib/db/migrate.js';
import { buildApp } from '../../lib/http/app.js';
import { serveNode } from '../../lib/http/runtime/node.js';
import { startWsProxy } from '../../scripts/ws-proxy.js';
import { auditLoad, drained } from '../../support/audit.js';
import { canRunPrivateCluster, privateCluster, type PrivateCluster, type StopMode } from '../../support/cluster.js';
import { send } from '../../support/http.js';
import { Load, until } from '../../support/load.js';
import { testMode } from '../support/mode.js';
import { portFrom, root, startServer } from '../support/server.js';

const LEASE_SECONDS = 5;

interface Broker {
  url: string;
  /** Still the process (or app) that was started: it was never restarted. */
  alive(): boolean;
  output(): string;
  stop(): Promise<void>;
}

// server.ts as `npm start` runs it, on node-postgres (a plain PostgreSQL URL picks it).
async function serverTs(databaseUrl: string): Promise<Broker> {
  const port = await portFrom(7900, 7950);
  const server = await startServer(root, { DATABASE_URL: databaseUrl, PORT: String(port), RETENTION_INTERVAL: '600000' });
  return {
    url: server.url,
    alive: () => server.child.exitCode === null && server.child.signalCode === null,
    output: server.output,
    stop: async () => void (await server.stop()),
  };
}

// The Node adapter in this process on the Neon driver, through a WebSocket proxy as Neon serves it.
async function neonInProcess(databaseUrl: string): Promise<Broker> {
  const proxy = await startWsProxy(await portFrom(7960, 7970));
  const db: Database = await connect({ url: databaseUrl, driver: 'neon', neonWsProxy: proxy.address, max: 10 });
  const logs: string[] = [];
  const app = buildApp(allFunctions, {
    config: readConfig({}, { auth: 'none' }),
    database: () => db,
    log: (m, e) => logs.push(`${m} ${e}`),
  });
  const server = await serveNode(app, await portFrom(7900, 7950), '127.0.0.1');
  return {
    url: server.url,
    alive: () => true,
    output: () => logs.join('\n'),
    async stop() {
      await server.close(1000);
      await db.close();
      await proxy.close();
    },
  };
}

describe.skipIf(testMode() !== 'pg' || !canRunPrivateCluster())('PostgreSQL restarting under load', () => {
  let cluster: PrivateCluster;
  beforeAll(async () => {
    cluster = await privateCluster(await portFrom(7950, 7960));
  });
  afterAll(() => cluster?.dispose());

  it.each([
    ['server.ts on node-postgres', serverTs],
    ['the Node adapter on the Neon driver', neonInProcess],
  ])('%s answers every failure with 503 and Retry-After, loses nothing and serves again unrestarted', async (name, start) => {
    const database = `queen_${name.includes('Neon') ? 'neon' : 'pg'}`;
    const admin = await connect({ url: cluster.url(), driver: 'pg', max: 1 });
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.close();
    const url = cluster.url(database);
    const db = await connect({ url, driver: 'pg', max: 2 });
    await migrate(db);
    const broker = await start(url);
    try {
      const queues = ['restart-a', 'restart-b'];
      for (const queue of queues) {
        const res = await send(broker.url, 'POST', '/api/v1/configure', JSON.stringify({ queue, options: { leaseTime: LEASE_SECONDS } }));
        expect(res.status).toBe(200);
      }
      const load = new Load({
        url: broker.url,
        run: `r${Date.now().toString(36)}`,
        queues,
        producers: 3,
        consumers: 2,
        partitions: 4,
        leaseSeconds: LEASE_SECONDS,
      });
      // Progress, not time: each restart happens under load and is followed by work that succeeds.
      const progressed = async (what: string, pushes: number, acks: number) => {
        const { pushes: p0, acks: a0 } = load.progress();
        await until(what, () => load.progress().pushes >= p0 + pushes && load.progress().acks >= a0 + acks, 90_000);
      };
      await progressed('the load is running', 60, 30);
      for (const mode of ['fast', 'immediate'] as StopMode[]) {
        await cluster.restart(mode, 500);
        await progressed(`pushes and acks succeed after the -m ${mode} restart`, 60, 30);
      }
      await load.stopProducing();
      await until('the consumers drained both queues', () => drained(db, queues), 90_000);
      await load.stopConsuming();

      const report = await auditLoad(db, load);
      const unavailable = load.tally.count((_, status) => status === '503');
      expect(unavailable, 'the restarts were seen by requests in flight').toBeGreaterThan(0);
      expect(load.tally.wrong, broker.output().slice(-4000)).toEqual([]);
      expect(load.tally.dropped).toEqual([]);
      expect(broker.alive()).toBe(true);
      expect(report.acknowledgedPushes).toBeGreaterThan(0);
      expect({
        lost: report.lost,
        storedTwice: report.storedTwice,
        gaps: report.gaps,
        redeliveredAfterAck: report.redeliveredAfterAck,
        underLiveLease: report.underLiveLease,
        undelivered: report.undelivered,
      }).toEqual({ lost: [], storedTwice: [], gaps: [], redeliveredAfterAck: [], underLiveLease: [], undelivered: [] });
    } finally {
      await broker.stop();
      await db.close();
    }
  });
});
