// Status and analytics for Queen's dashboard (docs/api.md#status-and-analytics): each answer is one SQL function building
// Queen's shape from the log (depth, lag, leases, dead letters) and the per-minute rollup
// (history). Figures nothing measures are null; worker figures say there are no workers.
import { namedArgs } from '../db/named-args.js';
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';
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

export interface StatusRequest {
  window: StatsWindow;
  filter: QueueFilter;
}

export interface StatusQueuesRequest {
  filter: QueueFilter;
  page: { limit: number; offset: number };
}

export interface AnalyticsRequest extends StatusRequest {
  interval: AnalyticsInterval;
}

/** One time series of one queue, or of every queue of the tenant. */
export interface SeriesRequest {
  window: StatsWindow;
  queue?: string;
}

type Json = Record<string, unknown>;

async function one<T = Json>(db: Queryable, sql: string, params: unknown[]): Promise<T> {
  const [row] = await db.query<{ j: T }>(sql, params);
  return row!.j;
}

const STATUS_SQL = `SELECT queen.dashboard_status(${namedArgs(
  'p_tenant',
  'p_from::timestamptz',
  'p_to::timestamptz',
  'p_queue',
  'p_namespace',
  'p_task',
)}) AS j`;
const STATUS_QUEUES_SQL = `SELECT queen.dashboard_status_queues(${namedArgs(
  'p_tenant',
  'p_queue',
  'p_namespace',
  'p_task',
  'p_limit',
  'p_offset',
)}) AS j`;
const ANALYTICS_SQL = `SELECT queen.dashboard_status_analytics(${namedArgs(
  'p_tenant',
  'p_from::timestamptz',
  'p_to::timestamptz',
  'p_queue',
  'p_namespace',
  'p_task',
  'p_interval',
)}) AS j`;

export const readStatus = (db: Queryable, { tenant }: TenantContext, { window: w, filter: f }: StatusRequest) =>
  one(db, STATUS_SQL, [tenant, w.from ?? null, w.to ?? null, f.queue ?? null, f.namespace ?? null, f.task ?? null]);

export const listStatusQueues = (db: Queryable, { tenant }: TenantContext, { filter: f, page }: StatusQueuesRequest) =>
  one(db, STATUS_QUEUES_SQL, [tenant, f.queue ?? null, f.namespace ?? null, f.task ?? null, page.limit, page.offset]);

export async function describeQueueStatus(db: Queryable, { tenant }: TenantContext, queue: string) {
  const detail = await one<Json | null>(db, 'SELECT queen.dashboard_status_queue(p_tenant => $1, p_queue => $2) AS j', [tenant, queue]);
  if (!detail) throw queueNotFound(queue);
  return detail;
}

export const readStatusAnalytics = (db: Queryable, { tenant }: TenantContext, { window: w, filter: f, interval }: AnalyticsRequest) =>
  one(db, ANALYTICS_SQL, [tenant, w.from ?? null, w.to ?? null, f.queue ?? null, f.namespace ?? null, f.task ?? null, interval]);

const windowed =
  (sql: string) =>
  (db: Queryable, { tenant }: TenantContext, { window: w, queue }: SeriesRequest) =>
    one(db, sql, [tenant, w.from ?? null, w.to ?? null, queue ?? null]);
const WINDOW_ARGS = 'p_tenant => $1, p_from => $2::timestamptz, p_to => $3::timestamptz, p_queue => $4';

export const readQueueOps = windowed(`SELECT queen.analytics_queue_ops(${WINDOW_ARGS}) AS j`);
export const readQueueLag = windowed(`SELECT queen.analytics_queue_lag(${WINDOW_ARGS}) AS j`);
export const readRetentionSeries = windowed(`SELECT queen.analytics_retention(${WINDOW_ARGS}) AS j`);

export const readWorkerMetrics = (db: Queryable, { tenant }: TenantContext, w: StatsWindow) =>
  one(db, 'SELECT queen.analytics_worker_metrics(p_tenant => $1, p_from => $2::timestamptz, p_to => $3::timestamptz) AS j', [
    tenant,
    w.from ?? null,
    w.to ?? null,
  ]);

const NO_PROCESSES =
  'no long-lived server processes: CPU, memory, connection-pool and long-poll series do not apply to a serverless deployment';

const windowRange = (db: Queryable, w: StatsWindow) =>
  one<{ timeRange: { from: string; to: string }; bucketMinutes: number }>(
    db,
    `SELECT jsonb_build_object('timeRange', queen.time_range(p_from => t_from, p_to => t_to), 'bucketMinutes', width) AS j
       FROM queen.stats_window(p_from => $1::timestamptz, p_to => $2::timestamptz, p_default => interval '1 hour')`,
    [w.from ?? null, w.to ?? null],
  );

/** Queen's per-replica process series: a serverless deployment has none, and says so. */
export async function readSystemMetrics(db: Queryable, w: StatsWindow) {
  return {
    ...(await windowRange(db, w)),
    replicas: [],
    replicaCount: 0,
    pointCount: 0,
    deployment: { kind: 'serverless', note: NO_PROCESSES },
  };
}

/** Long-polls parked per replica: a long-poll lives inside one function invocation and nothing tracks it. */
export async function readParkedReplicas(db: Queryable, w: StatsWindow) {
  return { ...(await windowRange(db, w)), series: [], replicas: [], deployment: { kind: 'serverless', note: NO_PROCESSES } };
}
