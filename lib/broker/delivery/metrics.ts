// Per-subscription series for /metrics/prometheus (docs/delivery.md): what each subscription
// delivered, failed and dead-lettered, whether it is paused and why, and its partitions in
// flight. Lag and the oldest undelivered message's age are its consumer group's, taken from the
// snapshot the rest of the page is built from, so the two never disagree.
import type { Queryable } from '../../db/types.js';
import type { MetricFamily } from '../metric-family.js';

type SubscriptionFigures = {
  queue: string;
  name: string;
  consumer_group: string;
  state: string;
  paused_reason: string | null;
  delivered: string;
  failed_attempts: string;
  dead_lettered: string;
  in_flight: string;
};

const FIGURES_SQL = `SELECT q.name AS queue, s.name, s.consumer_group, s.state, s.paused_reason, s.delivered, s.failed_attempts,
       s.dead_lettered,
       (SELECT count(*) FROM queen.subscription_partitions x WHERE x.subscription_id = s.id AND x.lease_until > now()) AS in_flight
  FROM queen.subscriptions s JOIN queen.queues q ON q.id = s.queue_id
 WHERE s.tenant_id = $1
 ORDER BY q.name, s.name`;

export interface GroupFigures {
  queue: string;
  group: string;
  lag: number;
  oldestAgeSeconds: number;
}

export async function subscriptionFamilies(db: Queryable, tenant: string, groups: readonly GroupFigures[]): Promise<MetricFamily[]> {
  const subs = await db.query<SubscriptionFigures>(FIGURES_SQL, [tenant]);
  if (subs.length === 0) return [];
  const byGroup = new Map(groups.map((g) => [`${g.queue}\u0000${g.group}`, g]));
  const labels = (s: SubscriptionFigures) => ({ queue: s.queue, subscription: s.name });
  const each = (pick: (s: SubscriptionFigures) => number) => subs.map((s) => ({ labels: labels(s), value: pick(s) }));
  const group = (s: SubscriptionFigures) => byGroup.get(`${s.queue}\u0000${s.consumer_group}`);
  return [
    {
      name: 'queen_subscription_messages_total',
      type: 'counter',
      help: 'Messages the subscription settled, by outcome: delivered (the endpoint took them) or dead_lettered (moved to the DLQ).',
      samples: subs.flatMap((s) => [
        { labels: { ...labels(s), outcome: 'delivered' }, value: Number(s.delivered) },
        { labels: { ...labels(s), outcome: 'dead_lettered' }, value: Number(s.dead_lettered) },
      ]),
    },
    {
      name: 'queen_subscription_failed_attempts_total',
      type: 'counter',
      help: 'Delivery attempts that failed (charged to the retry budget).',
      samples: each((s) => Number(s.failed_attempts)),
    },
    {
      name: 'queen_subscription_lag_messages',
      type: 'gauge',
      help: "Messages the subscription has not delivered yet (its consumer group's lag).",
      samples: each((s) => group(s)?.lag ?? 0),
    },
    {
      name: 'queen_subscription_oldest_undelivered_age_seconds',
      type: 'gauge',
      help: 'Age of the oldest message the subscription has not delivered; 0 when caught up.',
      samples: each((s) => group(s)?.oldestAgeSeconds ?? 0),
    },
    {
      name: 'queen_subscription_in_flight_partitions',
      type: 'gauge',
      help: 'Partitions with a batch sent to the endpoint and not yet settled.',
      samples: each((s) => Number(s.in_flight)),
    },
    {
      name: 'queen_subscription_paused',
      type: 'gauge',
      help: '1 while the subscription is paused; reason: endpoint_gone, endpoint_failing or paused_by_user.',
      samples: subs.map((s) => ({ labels: { ...labels(s), reason: s.paused_reason ?? '' }, value: Number(s.state === 'paused') })),
    },
  ];
}
