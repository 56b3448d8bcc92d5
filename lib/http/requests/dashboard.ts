// Query strings and bodies of the dashboard's routes (docs/api.md#status-and-analytics): time windows, queue filters,
// pages and the maintenance switch. Parameters the dashboard sends that mean nothing here
// (hostname, workerId) are ignored, as Queen ignores what it does not read.
import type { Context } from 'hono';
import * as v from 'valibot';
import { nameSchema } from '../../broker/names.js';
import { DEFAULT_ANALYTICS_WINDOW_MS, MAX_ANALYTICS_POINTS } from '../../broker/limits.js';
import type { AnalyticsInterval, QueueFilter, StatsWindow } from '../../broker/status.js';
import { badRequest } from '../../errors.js';
import type { BrokerEnv } from '../context.js';
import { isObject, pageParams, presentQuery, readJson, validate, windowParams } from './body.js';

export const MAX_STATUS_PAGE = 1000;

const dashboardQuery = v.object({
  ...windowParams,
  queue: v.optional(nameSchema('queue')),
  namespace: v.optional(nameSchema('namespace')),
  task: v.optional(nameSchema('task')),
  ...pageParams(MAX_STATUS_PAGE, 100, Number.MAX_SAFE_INTEGER),
  interval: v.optional(v.string(), 'hour'),
});

/** Every dashboard parameter, checked; empty values count as absent. */
export function parseDashboardQuery(query: Record<string, string>) {
  const q = validate(dashboardQuery, presentQuery(query), 'invalid_query');
  if (q.from !== undefined && q.to !== undefined && Date.parse(q.from) >= Date.parse(q.to)) {
    throw badRequest('invalid_query', `from (${q.from}) must be before to (${q.to}).`);
  }
  const window: StatsWindow = { from: q.from, to: q.to };
  const filter: QueueFilter = { queue: q.queue, namespace: q.namespace, task: q.task };
  // Queen reads anything but minute and day as hour.
  const interval: AnalyticsInterval = q.interval === 'minute' || q.interval === 'day' ? q.interval : 'hour';
  return { window, filter, page: { limit: q.limit, offset: q.offset }, interval };
}

export const readDashboardQuery = (c: Context<BrokerEnv>) => parseDashboardQuery(c.req.query());

const INTERVAL_MS: Record<AnalyticsInterval, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/**
 * /status/analytics: the dashboard query, and a window of at most MAX_ANALYTICS_POINTS intervals
 * (the series has a point for every one, so 80 years of minutes would be 42 million).
 */
export function parseAnalyticsQuery(query: Record<string, string>, now = Date.now()) {
  const q = parseDashboardQuery(query);
  const to = q.window.to === undefined ? now : Date.parse(q.window.to);
  const from = q.window.from === undefined ? to - DEFAULT_ANALYTICS_WINDOW_MS : Date.parse(q.window.from);
  const points = Math.ceil((to - from) / INTERVAL_MS[q.interval]);
  if (points > MAX_ANALYTICS_POINTS) {
    throw badRequest(
      'invalid_query',
      `That window holds ${points} ${q.interval}s; /status/analytics answers at most ${MAX_ANALYTICS_POINTS} points: narrow from/to or ask for a wider interval (hour, day).`,
    );
  }
  return q;
}

export const readAnalyticsQuery = (c: Context<BrokerEnv>) => parseAnalyticsQuery(c.req.query());

/** POST /system/maintenance[/pop]: `{"enabled": true|false}`. */
export async function readEnabled(c: Context<BrokerEnv>): Promise<boolean> {
  const body = await readJson(c);
  if (!isObject(body) || typeof body.enabled !== 'boolean') {
    throw badRequest('invalid_request', 'Send {"enabled": true} or {"enabled": false}: enabled (boolean) is required.');
  }
  return body.enabled;
}
