// Everything Queen's dashboard and a Prometheus scraper read (docs/operations.md#queens-dashboard); the configure family
// serves it.
import type { RouteSetup } from '../lib/http/context.js';
import { metricsRoutes } from './metrics.js';
import { statusRoutes } from './status.js';
import { systemRoutes } from './system.js';

export const dashboardRoutes: RouteSetup = (app) => {
  statusRoutes(app);
  systemRoutes(app);
  metricsRoutes(app);
};
