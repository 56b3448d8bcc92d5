// Maintenance switches, Queen's system routes with nothing behind them here, and /api/me.
import { describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const admin = testClient(db, { as: { tenant: 'maint-a' } });
const reader = testClient(db, { as: { tenant: 'maint-a', role: 'read-only', sub: 'dash-viewer' } });
const neighbour = testClient(db, { as: { tenant: 'maint-b' } });

describe('GET/POST /api/v1/system/maintenance', () => {
  it("reads off by default, in the shape every page's header polls, buffer figures all true zeros", async () => {
    const res = await reader.call('GET', '/api/v1/system/maintenance');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      maintenanceMode: false,
      popMaintenanceMode: false,
      bufferedMessages: 0,
      bufferHealthy: true,
      bufferStats: { failedCount: 0, failedFiles: { totalMB: 0 } },
    });
  });

  it('switches push and pop maintenance separately and stores them per tenant', async () => {
    const on = await admin.call('POST', '/api/v1/system/maintenance', { enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({
      maintenanceMode: true,
      bufferedMessages: 0,
      bufferHealthy: true,
      message: expect.stringMatching(/ENABLED/),
    });
    expect((await admin.call('POST', '/api/v1/system/maintenance/pop', { enabled: true })).body).toMatchObject({
      popMaintenanceMode: true,
    });
    expect((await admin.call('POST', '/api/v1/system/maintenance', { enabled: false })).body.maintenanceMode).toBe(false);

    expect((await reader.call('GET', '/api/v1/system/maintenance')).body).toMatchObject({
      maintenanceMode: false,
      popMaintenanceMode: true,
    });
    expect((await reader.call('GET', '/api/v1/system/maintenance/pop')).body).toMatchObject({
      popMaintenanceMode: true,
      message: expect.stringMatching(/ON/),
    });
    const rows = await db().query('SELECT tenant_id, maintenance, pop_maintenance FROM queen.tenant_settings ORDER BY tenant_id');
    expect(rows).toEqual([{ tenant_id: 'maint-a', maintenance: false, pop_maintenance: true }]);
    expect((await neighbour.call('GET', '/api/v1/system/maintenance')).body).toMatchObject({
      maintenanceMode: false,
      popMaintenanceMode: false,
    });
  });

  it('while either mode is on, pops of that tenant answer 204 and pushes still commit; off, they deliver', async () => {
    const neighbourPop = async () => (await neighbour.pop('queue/held?batch=10')).status;
    await admin.pushNumbered('held', 'p0', 3);
    await neighbour.pushNumbered('held', 'p0', 1);
    await admin.pushNumbered('ops.jobs', 'p0', 1);
    for (const path of ['/api/v1/system/maintenance', '/api/v1/system/maintenance/pop']) {
      await admin.call('POST', '/api/v1/system/maintenance', { enabled: false });
      await admin.call('POST', '/api/v1/system/maintenance/pop', { enabled: false });
      expect((await admin.call('POST', path, { enabled: true })).status).toBe(200);
      expect((await admin.pop('queue/held?batch=10')).status).toBe(204);
      expect((await admin.pop('queue/held/partition/p0?batch=10')).status).toBe(204);
      expect((await admin.call('GET', '/api/v1/pop?namespace=ops&batch=10')).status).toBe(204);
      const pushed = await admin.push('held', 'p0', [{ during: path }]);
      expect(pushed[0]).toMatchObject({ status: 'queued' });
    }
    // Another tenant's consumers are not paused.
    expect(await neighbourPop()).toBe(200);
    await admin.call('POST', '/api/v1/system/maintenance', { enabled: false });
    expect((await admin.pop('queue/held?batch=10')).status).toBe(204);
    await admin.call('POST', '/api/v1/system/maintenance/pop', { enabled: false });
    const res = await admin.pop('queue/held?batch=10');
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m) => m.data)).toEqual([
      { n: 0 },
      { n: 1 },
      { n: 2 },
      { during: '/api/v1/system/maintenance' },
      { during: '/api/v1/system/maintenance/pop' },
    ]);
  });

  it('refuses a body without a boolean enabled, and changes nothing', async () => {
    const before = await db().query('SELECT * FROM queen.tenant_settings ORDER BY tenant_id');
    for (const body of [{}, { enabled: 'yes' }, { enabled: 1 }, []]) {
      for (const path of ['/api/v1/system/maintenance', '/api/v1/system/maintenance/pop']) {
        const res = await admin.call('POST', path, body);
        expect([path, res.status, res.body.code]).toEqual([path, 400, 'invalid_request']);
      }
    }
    expect((await admin.call('POST', '/api/v1/system/maintenance', 'not json')).status).toBe(400);
    expect(await db().query('SELECT * FROM queen.tenant_settings ORDER BY tenant_id')).toEqual(before);
  });
});

describe('routes for what queen-serverless does not have', () => {
  it('migration status answers Queen\'s "nothing in progress", the other migration routes and streams 501', async () => {
    expect((await reader.call('GET', '/api/v1/migration/status')).body).toMatchObject({
      status: 'idle',
      currentStep: '',
      elapsedSeconds: 0,
    });
    for (const path of [
      '/api/v1/migration/test-connection',
      '/api/v1/migration/start',
      '/api/v1/migration/validate',
      '/api/v1/migration/reset',
      '/streams/v1/queries',
      '/streams/v1/cycle',
      '/streams/v1/state/get',
    ]) {
      const res = await admin.call('POST', path, {});
      expect([path, res.status, res.body.code]).toEqual([path, 501, 'not_supported']);
    }
  });

  it('shared state says it is off, as Queen does when its peer cache is', async () => {
    expect((await admin.call('GET', '/api/v1/system/shared-state')).body).toEqual({ enabled: false, reason: 'serverless' });
  });

  it('the status buffer route says there is no file buffer', async () => {
    expect((await reader.call('GET', '/api/v1/status/buffers')).body).toMatchObject({ pending: 0, failed: 0, dbHealthy: true });
  });
});

describe('GET /api/me', () => {
  it('names the caller: token subject, role, tenant and auth mode', async () => {
    expect((await reader.call('GET', '/api/me')).body).toEqual({
      username: 'dash-viewer',
      role: 'read-only',
      tenant: 'maint-a',
      auth: 'none',
    });
    expect((await testClient(db).call('GET', '/api/me')).body).toEqual({
      username: 'auth off',
      role: 'admin',
      tenant: 'default',
      auth: 'none',
    });
  });
});
