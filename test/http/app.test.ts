import { describe, expect, it } from 'vitest';
import { useDatabase } from '../support/db.js';
import { testClient } from '../support/client.js';
import { readConfig } from '../../lib/config.js';
import { QueenError } from '../../lib/errors.js';
import { buildApp } from '../../lib/http/app.js';
import { RETRY_AFTER_SECONDS } from '../../lib/http/errors.js';
import { serveNode } from '../../lib/http/runtime/node.js';
import { allFunctions } from '../../functions/index.js';

const db = useDatabase();

describe('every API response', () => {
  it('forbids caching, so a CDN in front of a function can never replay a pop', async () => {
    const { call } = testClient(db);
    await call('POST', '/api/v1/push', { items: [{ queue: 'nocache', payload: 1 }] });
    const popped = await call('GET', '/api/v1/pop/queue/nocache');
    const empty = await call('GET', '/api/v1/pop/queue/nocache');
    const bad = await call('GET', '/api/v1/pop/queue/nocache?batch=0');
    expect([popped.status, empty.status, bad.status]).toEqual([200, 204, 400]);
    for (const res of [popped, empty, bad]) expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('forbids caching on the wire from the Node server too, on the hot routes, their errors and every other route', async () => {
    const app = buildApp(allFunctions, { config: readConfig({}, { auth: 'none' }), database: () => db() });
    const server = await serveNode(app, 0, '127.0.0.1');
    try {
      const send = (method: string, path: string, body?: unknown) =>
        fetch(server.url + path, {
          method,
          headers: { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const pushed = await send('POST', '/api/v1/push', { items: [{ queue: 'nocache-node', payload: 1 }] });
      const popped = await send('GET', '/api/v1/pop/queue/nocache-node');
      const msg = ((await popped.json()) as any).messages[0];
      const acked = await send('POST', '/api/v1/ack/batch', {
        acknowledgments: [{ transactionId: msg.transactionId, partitionId: msg.partitionId, leaseId: msg.leaseId, status: 'completed' }],
      });
      const empty = await send('GET', '/api/v1/pop/queue/nocache-node');
      const bad = await send('POST', '/api/v1/push', { items: 'no' });
      const other = await send('GET', '/api/v1/resources/queues');
      expect([pushed.status, popped.status, acked.status, empty.status, bad.status, other.status]).toEqual([201, 200, 200, 204, 400, 200]);
      for (const res of [pushed, popped, acked, empty, bad, other]) expect(res.headers.get('cache-control')).toBe('no-store');
      expect(pushed.headers.get('content-type')).toBe('application/json');
      expect(((await pushed.json()) as any[])[0]).toMatchObject({ status: 'queued', queueName: 'nocache-node' });
    } finally {
      await server.close(0);
    }
  });

  it('answers an unknown route with a JSON 404 that has a stable code', async () => {
    const res = await testClient(db).call('GET', '/api/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'route_not_found' });
  });

  it('answers /health with the database state and the version', async () => {
    const res = await testClient(db).call('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'healthy', database: 'connected' });
    expect(typeof res.body.version).toBe('string');
  });
});

describe('/health when the database is not usable', () => {
  const appWith = (database: () => never) => buildApp([], { config: readConfig({}, { auth: 'none' }), database, log: () => {} });

  it('says the schema is outdated, with its code, rather than blaming the connection', async () => {
    const app = appWith(() => {
      throw new QueenError(503, 'schema_outdated', 'The database schema is not migrated; run the migrations.');
    });
    const res = await app.request('/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'unhealthy', database: 'connected', code: 'schema_outdated' });
  });

  it('reports a failed connection as disconnected, database_unavailable with Retry-After, without leaking the driver error', async () => {
    const app = appWith(() => {
      throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const res = await app.request('/health');
    const body = await res.json();
    expect(res.status).toBe(503);
    expect(body).toMatchObject({ status: 'unhealthy', database: 'disconnected', code: 'database_unavailable' });
    expect(res.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
    expect(JSON.stringify(body)).not.toContain('10.0.0.1');
  });
});
