import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testApp } from '../support/app.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.dispose());

describe('every API response', () => {
  it('forbids caching, so a CDN in front of a function can never replay a pop', async () => {
    const { call } = testApp(db);
    await call('POST', '/api/v1/push', { items: [{ queue: 'nocache', payload: 1 }] });
    const popped = await call('GET', '/api/v1/pop/queue/nocache');
    const empty = await call('GET', '/api/v1/pop/queue/nocache');
    const bad = await call('GET', '/api/v1/pop/queue/nocache?batch=0');
    expect([popped.status, empty.status, bad.status]).toEqual([200, 204, 400]);
    for (const res of [popped, empty, bad]) expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers an unknown route with a JSON 404 that has a stable code', async () => {
    const res = await testApp(db).call('GET', '/api/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'route_not_found' });
  });

  it('answers /health with the database state and the version', async () => {
    const res = await testApp(db).call('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'healthy', database: 'connected' });
    expect(typeof res.body.version).toBe('string');
  });

  it('answers a CORS preflight with 204 and an open origin', async () => {
    const { app } = testApp(db);
    const res = await app.request('/api/v1/push', { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
