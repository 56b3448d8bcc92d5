// Consumer groups (docs/semantics.md#consumer-groups-and-seek,
// docs/semantics.md#queens-other-routes) in the shapes Queen's clients and dashboard read: the list
// (a bare array), lagging partitions, one group's detail, subscription update and delete. Every
// figure comes from the cursors and the log (queen.group_partitions), computed on each request.
import { selectJson } from '../db/json.js';
import type { Queryable } from '../db/types.js';
import { badRequest } from '../errors.js';
import type { TenantContext } from './context.js';
import { QUEUE_MODE_GROUP } from './names.js';

export interface ConsumerGroupSummary {
  name: string;
  topics: string[];
  queueName: string;
  members: number;
  partitionsWithLag: number;
  totalLag: number;
  maxTimeLag: number;
  state: 'Lagging' | 'Stable' | 'Dead';
  subscriptionMode: 'all' | 'new' | 'timestamp' | null;
  subscriptionTimestamp: string | null;
  subscriptionCreatedAt: string | null;
  queue: string;
  partitions: number;
  lag: number;
  leasedPartitions: number;
  oldestUnconsumedAgeSeconds: number;
  subscribedAt: string | null;
}

export const listConsumerGroups = (db: Queryable, { tenant }: TenantContext, queue?: string) =>
  selectJson<ConsumerGroupSummary[]>(db, 'queen.list_consumer_groups(p_tenant => $1, p_queue => $2)', [tenant, queue ?? null]);

/** Every (group, partition) whose oldest unconsumed message is older than `minLagSeconds`. */
export const laggingPartitions = (db: Queryable, { tenant }: TenantContext, minLagSeconds: number) =>
  selectJson<unknown[]>(db, 'queen.lagging_partitions(p_tenant => $1, p_min_lag_seconds => $2)', [tenant, minLagSeconds]);

/** One group's partitions keyed by queue name; {} when the group reads nothing. */
export const consumerGroupDetail = (db: Queryable, { tenant }: TenantContext, group: string) =>
  selectJson<Record<string, unknown>>(db, 'queen.consumer_group_detail(p_tenant => $1, p_group => $2)', [tenant, group]);

/**
 * updateConsumerGroupTimestamp: the group's subscriptions on every queue start at `timestamp`
 * for partitions it has no cursor on yet; cursors it has do not move (that is seek).
 */
export interface SubscriptionUpdate {
  group: string;
  timestamp: string;
}

export async function updateSubscription(db: Queryable, { tenant }: TenantContext, { group, timestamp }: SubscriptionUpdate) {
  if (group === QUEUE_MODE_GROUP) {
    throw badRequest('invalid_request', 'Queue mode always reads from the beginning; update the subscription of a named consumer group.');
  }
  const [row] = await db.query<{ n: string }>(
    'SELECT queen.update_subscription(p_tenant => $1, p_group => $2, p_ts => $3::timestamptz) AS n',
    [tenant, group, timestamp],
  );
  return { success: true as const, consumerGroup: group, newTimestamp: timestamp, rowsUpdated: Number(row!.n) };
}

/**
 * Removes the group's cursors on one queue, or on every queue of the tenant, and its subscriptions
 * unless `deleteMetadata` is false (then the group starts over from where it first subscribed).
 */
export interface DeleteConsumerGroupRequest {
  group: string;
  /** Absent: every queue of the tenant. */
  queue?: string;
  /** Defaults to true. */
  deleteMetadata?: boolean;
}

export async function deleteConsumerGroup(db: Queryable, { tenant }: TenantContext, req: DeleteConsumerGroupRequest) {
  const { group, queue, deleteMetadata = true } = req;
  const [row] = await db.query<{ cursors: string; subscriptions: string }>(
    'SELECT cursors, subscriptions FROM queen.delete_consumer_group(p_tenant => $1, p_group => $2, p_queue => $3, p_metadata => $4)',
    [tenant, group, queue ?? null, deleteMetadata],
  );
  const cursors = Number(row!.cursors);
  const subscriptions = Number(row!.subscriptions);
  return {
    success: true as const,
    consumerGroup: group,
    ...(queue === undefined ? {} : { queueName: queue }),
    deletedPartitions: cursors,
    metadataDeleted: deleteMetadata,
    deleted: true as const,
    queue: queue ?? null,
    existed: cursors + subscriptions > 0,
    cursors,
  };
}

/** POST /stats/refresh: Queen rebuilds cached statistics; every figure here is computed per request. */
export const refreshStats = () => ({
  success: true as const,
  skipped: true as const,
  reason: 'Figures are computed from the log on every request; there is no cached statistic to refresh.',
});
