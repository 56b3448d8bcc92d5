// Status and analytics for Queen's dashboard (docs/semantics.md#figures), in the
// configure family.
import {
  describeQueueStatus,
  listStatusQueues,
  readParkedReplicas,
  readQueueLag,
  readQueueOps,
  readRetentionSeries,
  readStatus,
  readStatusAnalytics,
  readSystemMetrics,
  readWorkerMetrics,
} from '../lib/broker/status.js';
import { readPostgresStats } from '../lib/broker/postgres-stats.js';
import { brokerContext, requireRole, type RouteSetup } from '../lib/http/context.js';
import { nameParam } from '../lib/http/requests/configure.js';
import { readAnalyticsQuery, readDashboardQuery } from '../lib/http/requests/dashboard.js';

export const statusRoutes: RouteSetup = (app) => {
  const reader = requireRole('read-only');

  app.get('/api/v1/status', reader, async (c) => {
    return c.json(await readStatus(c.get('db'), brokerContext(c), readDashboardQuery(c)));
  });

  app.get('/api/v1/status/queues', reader, async (c) => {
    return c.json(await listStatusQueues(c.get('db'), brokerContext(c), readDashboardQuery(c)));
  });

  app.get('/api/v1/status/queues/:queue', reader, async (c) =>
    c.json(await describeQueueStatus(c.get('db'), brokerContext(c), nameParam(c, 'queue', 'queue'))),
  );

  app.get('/api/v1/status/analytics', reader, async (c) => {
    return c.json(await readStatusAnalytics(c.get('db'), brokerContext(c), readAnalyticsQuery(c)));
  });

  // Queen's push buffer: pushes here always commit, so there is none.
  app.get('/api/v1/status/buffers', reader, (c) =>
    c.json({ pending: 0, failed: 0, dbHealthy: true, note: 'no file buffer: pushes always commit to the database' }),
  );

  app.get('/api/v1/analytics/queue-ops', reader, async (c) => {
    const { window, filter } = readDashboardQuery(c);
    return c.json(await readQueueOps(c.get('db'), brokerContext(c), { window, queue: filter.queue }));
  });

  app.get('/api/v1/analytics/queue-lag', reader, async (c) => {
    const { window, filter } = readDashboardQuery(c);
    return c.json(await readQueueLag(c.get('db'), brokerContext(c), { window, queue: filter.queue }));
  });

  app.get('/api/v1/analytics/retention', reader, async (c) => {
    const { window, filter } = readDashboardQuery(c);
    return c.json(await readRetentionSeries(c.get('db'), brokerContext(c), { window, queue: filter.queue }));
  });

  app.get('/api/v1/analytics/worker-metrics', reader, async (c) =>
    c.json(await readWorkerMetrics(c.get('db'), brokerContext(c), readDashboardQuery(c).window)),
  );

  app.get('/api/v1/analytics/system-metrics', reader, async (c) =>
    c.json(await readSystemMetrics(c.get('db'), readDashboardQuery(c).window)),
  );

  app.get('/api/v1/analytics/queue-parked-replicas', reader, async (c) =>
    c.json(await readParkedReplicas(c.get('db'), readDashboardQuery(c).window)),
  );

  // PostgreSQL's own statistics are database-wide: they cross tenants, so admins only.
  app.get('/api/v1/analytics/postgres-stats', requireRole('admin'), async (c) => c.json(await readPostgresStats(c.get('db'))));
};
