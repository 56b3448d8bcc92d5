// Status and analytics for Queen's dashboard (docs/api.md#status-and-analytics): each answer is one SQL function building
// Queen's shape from the log (depth, lag, leases, dead letters) and the per-minute rollup
// (history). Figures nothing measures are null; worker figures say there are no workers.
import type { Queryable } from '../db/types.js';
import { queueNotFound } from './queues.js';

/** A time-series window; absent ends default in PostgreSQL (to = now, from = to minus the route's default). */
export interface StatsWindow {
  from?: string;
  to?: string;
}

export interface QueueFilter {
  queue?: string;
  namespace?: string;
  task?: string;
}

export type AnalyticsInterval = 'minute' | 'hour' | 'day';

type Json = Record<string, unknown>;

async function one<T = Json>(db: Queryable, sql: string, params: unknown[]): Promise<T> {
  const [row] = await db.query<{ j: T }>(sql, params);
  return row!.j;
}

export const readStatus = (db: Queryable, tenant: string, w: StatsWindow, f: QueueFilter) =>
  one(db, 'SELECT queen.dashboard_status($1, $2::timestamptz, $3::timestamptz, $4, $5, $6) AS j', [
    tenant, w.from ?? null, w.to ?? null, f.queue ?? null, f.namespace ?? null, f.task ?? null,
  ]);

export const listStatusQueues = (db: Queryable, tenant: string, f: QueueFilter, page: { limit: number; offset: number }) =>
  one(db, 'SELECT queen.dashboard_status_queues($1, $2, $3, $4, $5, $6) AS j', [
    tenant, f.queue ?? null, f.namespace ?? null, f.task ?? null, page.limit, page.offset,
  ]);

export async function describeQueueStatus(db: Queryable, tenant: string, queue: string) {
  const detail = await one<Json | null>(db, 'SELECT queen.dashboard_status_queue($1, $2) AS j', [tenant, queue]);
  if (!detail) throw queueNotFound(queue);
  return detail;
}

export const readStatusAnalytics = (db: Queryable, tenant: string, w: StatsWindow, f: QueueFilter, interval: AnalyticsInterval) =>
  one(db, 'SELECT queen.dashboard_status_analytics($1, $2::timestamptz, $3::timestamptz, $4, $5, $6, $7) AS j', [
    tenant, w.from ?? null, w.to ?? null, f.queue ?? null, f.namespace ?? null, f.task ?? null, interval,
  ]);

const windowed = (fn: string) => (db: Queryable, tenant: string, w: StatsWindow, queue?: string) =>
  one(db, `SELECT queen.${fn}($1, $2::timestamptz, $3::timestamptz, $4) AS j`, [tenant, w.from ?? null, w.to ?? null, queue ?? null]);

export const readQueueOps = windowed('analytics_queue_ops');
export const readQueueLag = windowed('analytics_queue_lag');
export const readRetentionSeries = windowed('analytics_retention');

export const readWorkerMetrics = (db: Queryable, tenant: string, w: StatsWindow) =>
  one(db, 'SELECT queen.analytics_worker_metrics($1, $2::timestamptz, $3::timestamptz) AS j', [tenant, w.from ?? null, w.to ?? null]);

const NO_PROCESSES = 'no long-lived server processes: CPU, memory, connection-pool and long-poll series do not apply to a serverless deployment';

const windowRange = (db: Queryable, w: StatsWindow) =>
  one<{ timeRange: { from: string; to: string }; bucketMinutes: number }>(
    db,
    `SELECT jsonb_build_object('timeRange', queen.time_range(t_from, t_to), 'bucketMinutes', width) AS j
       FROM queen.stats_window($1::timestamptz, $2::timestamptz, interval '1 hour')`,
    [w.from ?? null, w.to ?? null],
  );

/** Queen's per-replica process series: a serverless deployment has none, and says so. */
export async function readSystemMetrics(db: Queryable, w: StatsWindow) {
  return { ...(await windowRange(db, w)), replicas: [], replicaCount: 0, pointCount: 0, deployment: { kind: 'serverless', note: NO_PROCESSES } };
}

/** Long-polls parked per replica: a long-poll lives inside one function invocation and nothing tracks it. */
export async function readParkedReplicas(db: Queryable, w: StatsWindow) {
  return { ...(await windowRange(db, w)), series: [], replicas: [], deployment: { kind: 'serverless', note: NO_PROCESSES } };
}
