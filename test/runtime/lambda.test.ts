// The deployed Lambda entry points, invoked in-process with function-URL (payload 2.0) events
// against the real PostgreSQL, auth on as in a deployment.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import type { Database } from '../../lib/db/types.js';
import { readMigrations } from '../../lib/db/migrate.js';
import { createLambdaHandler } from '../../lib/http/runtime/lambda.js';
import push from '../../functions/push.js';
import { useDatabase } from '../support/db.js';
import { adminUrl, databaseUrl, testMode } from '../support/mode.js';
import { functionUrlEvent, JWT_SECRET, parseResult, token, type LambdaResult } from '../../support/lambda.js';

type Handler = (event: unknown, context?: unknown) => Promise<LambdaResult>;

describe.skipIf(testMode() !== 'pg')('Lambda function-URL handlers', () => {
  const db = useDatabase();
  let handlers: Record<'push' | 'pop' | 'ack', Handler>;
  let writer: string;

  beforeAll(async () => {
    // The entry modules read their configuration from process.env when they load, as on Lambda.
    Object.assign(process.env, { DATABASE_URL: db().url, JWT_SECRET, QUEEN_AUTH: '' });
    handlers = {
      push: (await import('../../functions/lambda/push.js')).handler as unknown as Handler,
      pop: (await import('../../functions/lambda/pop.js')).handler as unknown as Handler,
      ack: (await import('../../functions/lambda/ack.js')).handler as unknown as Handler,
    };
    writer = await token({ role: 'read-write', sub: 'lambda-test' });
  });

  const call = async (fn: keyof typeof handlers, ...args: Parameters<typeof functionUrlEvent>) =>
    parseResult(await handlers[fn](functionUrlEvent(...args)));

  it('pushes a base64-encoded body, pops it back and acks it, each through its own function', async () => {
    const auth = { authorization: `Bearer ${writer}` };
    const body = {
      items: [{ queue: 'lambda-orders', partition: 'p1', transactionId: 'order-1', payload: { id: 1, big: Number.MAX_SAFE_INTEGER } }],
    };
    const pushed = await call('push', 'POST', '/api/v1/push', { body, base64: true, headers: auth });
    expect(pushed.status).toBe(201);
    expect(pushed.body).toMatchObject([{ index: 0, status: 'queued', transaction_id: 'order-1', queueName: 'lambda-orders', offset: 0 }]);

    const popped = await call('pop', 'GET', '/api/v1/pop/queue/lambda-orders?batch=10', { headers: auth });
    expect(popped.status).toBe(200);
    expect(popped.body.messages).toHaveLength(1);
    const [message] = popped.body.messages;
    expect(message).toMatchObject({ transactionId: 'order-1', producerSub: 'lambda-test', partition: 'p1' });
    expect(message.data).toEqual({ id: 1, big: Number.MAX_SAFE_INTEGER });

    const acked = await call('ack', 'POST', '/api/v1/ack', {
      body: { transactionId: 'order-1', partitionId: message.partitionId, leaseId: popped.body.leaseId, status: 'completed' },
      headers: auth,
    });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject([{ success: true, committed: true }]);
    expect((await call('pop', 'GET', '/api/v1/pop/queue/lambda-orders', { headers: auth })).status).toBe(204);
  });

  it('answers /health without a token but refuses an API call without one (auth is on by default)', async () => {
    expect(await call('push', 'GET', '/health')).toMatchObject({ status: 200, body: { status: 'healthy' } });
    const refused = await call('push', 'POST', '/api/v1/push', { body: { items: [] } });
    expect(refused).toEqual({ status: 401, body: { error: 'Authentication required', code: 'unauthenticated' } });
  });

  it('answers 503 schema_outdated on a database the deploy never migrated, creates nothing, and recovers once the migrator ran', async () => {
    const name = `queen_t${process.ppid}_${process.pid}_unmigrated`;
    const admin = await connect({ url: adminUrl(), driver: 'pg', max: 1 });
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    let empty: Database | undefined;
    try {
      const handler = createLambdaHandler([push], { DATABASE_URL: databaseUrl(name), JWT_SECRET }) as unknown as Handler;
      const event = () =>
        functionUrlEvent('POST', '/api/v1/push', {
          body: { items: [{ queue: 'late', payload: 1 }] },
          headers: { authorization: `Bearer ${writer}` },
        });
      const refused = parseResult(await handler(event()));
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('schema_outdated');
      expect(refused.body.error).toMatch(/not migrated.*Run the migrations/);
      empty = await connect({ url: databaseUrl(name), driver: 'pg', max: 1 });
      expect(await empty.query("SELECT to_regnamespace('queen') AS s, to_regclass('drizzle.__drizzle_migrations') AS t")).toEqual([
        { s: null, t: null },
      ]);

      // What `sst deploy` invokes: the migrator Lambda, with the drizzle/ folder beside its code.
      const { handler: migrator } = await import('../../functions/lambda/migrate.js');
      const saved = { url: process.env.DATABASE_URL, root: process.env.LAMBDA_TASK_ROOT };
      Object.assign(process.env, { DATABASE_URL: databaseUrl(name), LAMBDA_TASK_ROOT: fileURLToPath(new URL('../..', import.meta.url)) });
      try {
        expect(await migrator()).toMatchObject({
          applied: readMigrations().map((m) => m.tag),
          repaired: [],
          migration: readMigrations().at(-1)!.tag,
        });
      } finally {
        process.env.DATABASE_URL = saved.url;
        if (saved.root === undefined) delete process.env.LAMBDA_TASK_ROOT;
        else process.env.LAMBDA_TASK_ROOT = saved.root;
      }
      // The same warm instance serves as soon as the schema is there: no redeploy, no cold start.
      expect(parseResult(await handler(event())).status).toBe(201);
    } finally {
      await empty?.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    }
  });

  it('answers 503 database_not_configured when the function has no DATABASE_URL', async () => {
    const handler = createLambdaHandler([push], { JWT_SECRET }) as unknown as Handler;
    const result = parseResult(
      await handler(functionUrlEvent('POST', '/api/v1/push', { body: { items: [] }, headers: { authorization: `Bearer ${writer}` } })),
    );
    expect(result).toMatchObject({ status: 503, body: { code: 'database_not_configured' } });
  });

  it('runs retention from the scheduled-event handler against the deployment database', async () => {
    const auth = { authorization: `Bearer ${writer}` };
    const body = { items: [{ queue: 'lambda-retained', payload: 'old' }] };
    expect((await call('push', 'POST', '/api/v1/push', { body, headers: auth })).status).toBe(201);
    // Age the segment instead of waiting: retention compares PostgreSQL times only.
    await db().query("UPDATE queen.queues SET retention_enabled = true, retention_seconds = 60 WHERE name = 'lambda-retained'");
    await db().query(
      "UPDATE queen.log_segments s SET created_at = now() - interval '2 hours' FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE s.partition_id = p.id AND q.name = 'lambda-retained'",
    );
    const { handler } = await import('../../functions/lambda/retention.js');
    const scheduled = {
      version: '0',
      id: 'e1',
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      time: new Date().toISOString(),
      resources: [],
      detail: {},
    };
    const report = (await (handler as (e: unknown) => Promise<any>)(scheduled)) as { queues: { queue: string; segmentsDeleted: number }[] };
    expect(report.queues).toContainEqual(expect.objectContaining({ queue: 'lambda-retained', segmentsDeleted: 1 }));
  });
});
