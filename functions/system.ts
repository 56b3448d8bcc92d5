// Maintenance switches (docs/semantics.md#maintenance-mode), and Queen's system routes that have no
// counterpart here (docs/semantics.md#queens-other-routes): shared state, PG-to-PG
// migration and streams answer what is true, or 501.
import type { Context } from 'hono';
import { getMaintenance, maintenanceChanged, maintenanceStatus, popMaintenanceStatus, setMaintenance } from '../lib/broker/maintenance.js';
import { brokerContext, requireRole, type BrokerEnv, type RouteSetup } from '../lib/http/context.js';
import { readEnabled } from '../lib/http/requests/dashboard.js';

const notSupported = (c: Context<BrokerEnv>, what: string) =>
  c.json({ error: `${what} is not supported by queen-serverless (docs/semantics.md#queens-other-routes).`, code: 'not_supported' }, 501);

export const systemRoutes: RouteSetup = (app) => {
  // Every page of the dashboard polls this, so reading needs only read-only; switching needs admin.
  app.get('/api/v1/system/maintenance', requireRole('read-only'), async (c) =>
    c.json(maintenanceStatus(await getMaintenance(c.get('db'), brokerContext(c)))),
  );
  app.post('/api/v1/system/maintenance', requireRole('admin'), async (c) => {
    const enabled = await readEnabled(c);
    return c.json(maintenanceChanged(await setMaintenance(c.get('db'), brokerContext(c), { maintenance: enabled })));
  });
  app.get('/api/v1/system/maintenance/pop', requireRole('read-only'), async (c) =>
    c.json(popMaintenanceStatus(await getMaintenance(c.get('db'), brokerContext(c)))),
  );
  app.post('/api/v1/system/maintenance/pop', requireRole('admin'), async (c) => {
    const enabled = await readEnabled(c);
    return c.json(popMaintenanceStatus(await setMaintenance(c.get('db'), brokerContext(c), { popMaintenance: enabled })));
  });

  // Queen's own answer when its peer-to-peer cache is off: every function here is stateless.
  app.get('/api/v1/system/shared-state', requireRole('admin'), (c) => c.json({ enabled: false, reason: 'serverless' }));

  app.get('/api/v1/migration/status', requireRole('read-only'), (c) =>
    c.json({ status: 'idle', currentStep: '', elapsedSeconds: 0, note: 'PG-to-PG migration is not supported by queen-serverless' }),
  );
  app.post('/api/v1/migration/:action', requireRole('admin'), (c) => notSupported(c, 'PG-to-PG migration'));
  app.post('/streams/v1/*', requireRole('read-write'), (c) => notSupported(c, 'Streams'));

  // The dashboard asks its own origin who is signed in (Queen's auth proxy answers this); the
  // truthful answer is the caller's token, or that auth is off.
  app.get('/api/me', requireRole('read-only'), (c) => {
    const p = c.get('principal');
    const auth = c.get('config').auth;
    return c.json({ username: p.sub ?? (auth === 'none' ? 'auth off' : 'token without sub'), role: p.role, tenant: p.tenant, auth });
  });
};
