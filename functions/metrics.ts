// /metrics (Queen's JSON) and /metrics/prometheus (docs/api.md#metrics), in the configure family. Outside
// /api, but behind the same middleware: a scraper sends a bearer token (read-only is enough) and
// sees its own tenant's queues.
import type { Context } from 'hono';
import { collectMetrics, readMessageTotals } from '../lib/broker/metrics.js';
import { VERSION } from '../lib/http/app.js';
import { brokerContext, requireRole, type BrokerEnv, type RouteSetup } from '../lib/http/context.js';
import { encodePrometheus, PROMETHEUS_CONTENT_TYPE } from '../lib/http/prometheus.js';

// What this one function instance knows of itself (Node only; a Worker has no process figures).
function instance() {
  const proc = globalThis.process;
  const memory = typeof proc?.memoryUsage === 'function' ? proc.memoryUsage() : null;
  const cpu = typeof proc?.cpuUsage === 'function' ? proc.cpuUsage() : null;
  return {
    uptime: typeof proc?.uptime === 'function' ? Math.floor(proc.uptime()) : null,
    memory: {
      rss: memory?.rss ?? null,
      heapTotal: memory?.heapTotal ?? null,
      heapUsed: memory?.heapUsed ?? null,
      external: memory?.external ?? null,
      arrayBuffers: memory?.arrayBuffers ?? null,
    },
    cpu: { user: cpu?.user ?? null, system: cpu?.system ?? null },
  };
}

export const metricsRoutes: RouteSetup = (app) => {
  app.get('/metrics', requireRole('read-only'), async (c) => {
    const totals = await readMessageTotals(c.get('db'), brokerContext(c));
    const self = instance();
    return c.json({
      uptime: self.uptime,
      requests: { total: null, rate: null },
      messages: { total: totals.pushed, rate: totals.pushedPerSecond },
      database: { poolSize: null, idleConnections: null, waitingRequests: null },
      memory: self.memory,
      cpu: self.cpu,
      deployment: {
        kind: 'serverless',
        note: 'uptime, memory and cpu describe the one function instance that answered; requests are not counted',
      },
    });
  });

  app.get('/metrics/prometheus', requireRole('read-only'), async (c: Context<BrokerEnv>) => {
    const principal = c.get('principal');
    const report = await collectMetrics(c.get('db'), brokerContext(c), {
      partitionSeries: c.get('config').metricsPartitionSeries,
      databaseWide: principal.role === 'admin',
      version: VERSION,
    });
    return c.body(encodePrometheus(report.families, report.omitted ? [report.omitted] : []), 200, {
      'Content-Type': PROMETHEUS_CONTENT_TYPE,
    });
  });
};
