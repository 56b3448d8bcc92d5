// CORS is off unless QUEEN_CORS_ORIGINS names origins (docs/api.md#cors): a browser client needs it
// on, everything else pays nothing for it.
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config.js';
import { useDatabase } from '../support/db.js';
import { testClient } from '../support/client.js';

const db = useDatabase();
const preflight = {
  method: 'OPTIONS',
  headers: {
    origin: 'https://app.example',
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization, content-type',
  },
};
const corsHeaders = (headers: Headers) => [...headers.keys()].filter((k) => k.startsWith('access-control-') || k === 'vary');

describe('CORS', () => {
  it('is off by default: no middleware is registered and no answer carries a CORS header', async () => {
    const { app, call } = testClient(db);
    expect(app.routes.filter((r) => r.path === '/*')).toEqual([]);
    const pushed = await call('POST', '/api/v1/push', { items: [{ queue: 'cors-off', payload: 1 }] }, { origin: 'https://app.example' });
    expect(pushed.status).toBe(201);
    expect(corsHeaders(pushed.headers)).toEqual([]);
    const asked = await app.request('/api/v1/push', preflight);
    expect(corsHeaders(asked.headers)).toEqual([]);
  });

  it('with *, answers a preflight 204 for any origin and lets a browser read answers and Retry-After', async () => {
    const { app, call } = testClient(db, { config: { corsOrigins: '*' } });
    const asked = await app.request('/api/v1/push', preflight);
    expect(asked.status).toBe(204);
    expect(asked.headers.get('access-control-allow-origin')).toBe('*');
    expect(asked.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(asked.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
    for (const res of [
      await call('POST', '/api/v1/push', { items: [{ queue: 'cors-any', payload: 1 }] }, { origin: 'https://anywhere.example' }),
      await call('GET', '/api/v1/pop/queue/cors-any?batch=0', undefined, { origin: 'https://anywhere.example' }),
      await call('GET', '/health', undefined, { origin: 'https://anywhere.example' }),
    ]) {
      expect(res.headers.get('access-control-allow-origin'), res.text).toBe('*');
      expect(res.headers.get('access-control-expose-headers')).toBe('Retry-After');
    }
  });

  it('with a list, echoes a listed origin with Vary: Origin and gives an unlisted one nothing', async () => {
    const config = {
      corsOrigins: readConfig({ QUEEN_CORS_ORIGINS: 'https://app.example, http://localhost:5173' }, { auth: 'none' }).corsOrigins,
    };
    const { app, call } = testClient(db, { config });
    const asked = await app.request('/api/v1/push', preflight);
    expect([asked.status, asked.headers.get('access-control-allow-origin'), asked.headers.get('vary')]).toEqual([
      204,
      'https://app.example',
      'Origin',
    ]);
    const listed = await call('GET', '/api/v1/pop/queue/cors-list', undefined, { origin: 'http://localhost:5173' });
    expect([listed.status, listed.headers.get('access-control-allow-origin'), listed.headers.get('vary')]).toEqual([
      204,
      'http://localhost:5173',
      'Origin',
    ]);
    const other = await call('GET', '/api/v1/pop/queue/cors-list', undefined, { origin: 'https://evil.example' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await app.request('/api/v1/push', { ...preflight, headers: { ...preflight.headers, origin: 'https://evil.example' } });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('reads QUEEN_CORS_ORIGINS as off, * or origins, and refuses a value that is not an origin', () => {
    expect(readConfig({}, { auth: 'none' }).corsOrigins).toBeNull();
    expect(readConfig({ QUEEN_CORS_ORIGINS: '' }, { auth: 'none' }).corsOrigins).toBeNull();
    expect(readConfig({ QUEEN_CORS_ORIGINS: '*' }, { auth: 'none' }).corsOrigins).toBe('*');
    expect(() => readConfig({ QUEEN_CORS_ORIGINS: 'https://app.example/path' }, { auth: 'none' })).toThrow(
      /QUEEN_CORS_ORIGINS must be \* or comma-separated origins/,
    );
    expect(() => readConfig({ QUEEN_CORS_ORIGINS: 'app.example' }, { auth: 'none' })).toThrow(/QUEEN_CORS_ORIGINS/);
  });
});
