// Consumer groups (SPEC §3.7): listing with lag and oldest unconsumed age, and delete.
import type { Queryable } from '../db/types.js';

export interface ConsumerGroupSummary {
  name: string;
  queue: string;
  partitions: number;
  lag: number;
  leasedPartitions: number;
  oldestUnconsumedAgeSeconds: number;
  subscriptionMode: string | null;
  subscribedAt: string | null;
}

export async function listConsumerGroups(db: Queryable, tenant: string, queue?: string): Promise<ConsumerGroupSummary[]> {
  const [row] = await db.query<{ j: ConsumerGroupSummary[] }>('SELECT queen.list_consumer_groups($1, $2) AS j', [tenant, queue ?? null]);
  return row!.j;
}

/** Removes the group's cursors and subscription on one queue, or on every queue of the tenant. */
export async function deleteConsumerGroup(db: Queryable, tenant: string, group: string, queue?: string) {
  const [row] = await db.query<{ cursors: string; subscriptions: string }>(
    'SELECT cursors, subscriptions FROM queen.delete_consumer_group($1, $2, $3)',
    [tenant, group, queue ?? null],
  );
  const cursors = Number(row!.cursors);
  const subscriptions = Number(row!.subscriptions);
  return {
    deleted: true as const,
    consumerGroup: group,
    queue: queue ?? null,
    existed: cursors + subscriptions > 0,
    cursors,
  };
}
