// What /metrics and /metrics/prometheus say about a tenant (docs/api.md#metrics): Queen's metric names where
// their meaning holds, and the log model's own (offsets, lag, oldest unconsumed age, dead letters,
// segment and sidecar bytes). Per-partition series stop at a limit; per-queue aggregates never do.
// No process, worker, pool or request-count family: a serverless deployment has none to describe.
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';
import { subscriptionFamilies } from './delivery/metrics.js';
import type { MetricFamily } from './metric-family.js';

export type { MetricFamily } from './metric-family.js';

interface Snapshot {
  queues: {
    queue: string;
    partitions: number;
    messages: number;
    pushed: number;
    sidecarBytes: number;
    deadLetter: number;
    segments: number;
    segmentBytes: number;
    pushedLastMinute: number | null;
  }[];
  groups: {
    queue: string;
    group: string;
    partitions: number;
    lag: number;
    oldestAgeSeconds: number;
    inFlight: number;
    leased: number;
    consumed: number;
  }[];
  partitionCount: number;
  partitions: { queue: string; partition: string; lastOffset: number; logStart: number }[] | null;
  maintenance: boolean;
  popMaintenance: boolean;
  rollupAgeSeconds: number | null;
  tables: { table: string; bytes: number }[] | null;
}

export interface MetricsOptions {
  /** Per-partition series only while the tenant has at most this many partitions. */
  partitionSeries: number;
  /** Database-wide table sizes: they cross tenants, so only for an admin. */
  databaseWide: boolean;
  version: string;
}

export interface MetricsReport {
  families: MetricFamily[];
  /** Set when per-partition series were left out, saying why. */
  omitted: string | null;
}

export async function collectMetrics(db: Queryable, { tenant }: TenantContext, options: MetricsOptions): Promise<MetricsReport> {
  const [row] = await db.query<{ j: Snapshot }>(
    'SELECT queen.metrics_snapshot(p_tenant => $1, p_partition_limit => $2, p_database => $3) AS j',
    [tenant, options.partitionSeries, options.databaseWide],
  );
  const s = row!.j;
  const family = (name: string, type: MetricFamily['type'], help: string, samples: MetricFamily['samples']): MetricFamily => ({
    name,
    type,
    help,
    samples,
  });
  const perQueue = (pick: (q: Snapshot['queues'][number]) => number | null) =>
    s.queues.flatMap((q) => (pick(q) === null ? [] : [{ labels: { queue: q.queue }, value: pick(q)! }]));
  const perGroup = (pick: (g: Snapshot['groups'][number]) => number) =>
    s.groups.map((g) => ({ labels: { queue: g.queue, consumer_group: g.group }, value: pick(g) }));
  const cluster = { scope: 'cluster' };
  const sum = (pick: (q: Snapshot['queues'][number]) => number) => s.queues.reduce((n, q) => n + pick(q), 0);
  const rollup = s.rollupAgeSeconds !== null;

  const families: MetricFamily[] = [
    family('queen_build_info', 'gauge', 'Always 1; the version label says which queen-serverless answers.', [
      { labels: { version: options.version }, value: 1 },
    ]),
    family(
      'queen_maintenance_mode_enabled',
      'gauge',
      "1 while this tenant's maintenance mode is on: pops answer 204, pushes still commit.",
      [{ value: Number(s.maintenance) }],
    ),
    family(
      'queen_pop_maintenance_mode_enabled',
      'gauge',
      "1 while this tenant's pop maintenance mode is on: pops answer 204, pushes still commit.",
      [{ value: Number(s.popMaintenance) }],
    ),
    family(
      'queen_cluster_push_messages_total',
      'counter',
      "Messages ever pushed to this tenant's queues (the partitions' offsets; a deleted queue takes its count with it).",
      [{ labels: cluster, value: sum((q) => q.pushed) }],
    ),
    family('queen_dlq_depth', 'gauge', "Dead-letter rows of this tenant's queues now.", [
      { labels: cluster, value: sum((q) => q.deadLetter) },
    ]),
    family(
      'queen_dlq_depth_by_queue',
      'gauge',
      'Dead-letter rows of the queue now.',
      perQueue((q) => q.deadLetter),
    ),
    family('queen_partitions', 'gauge', "Partitions of this tenant's queues.", [{ value: s.partitionCount }]),
    family(
      'queen_queue_partitions',
      'gauge',
      'Partitions of the queue.',
      perQueue((q) => q.partitions),
    ),
    family(
      'queen_queue_messages',
      'gauge',
      'Messages the queue holds (last_offset - log_start + 1 over its partitions).',
      perQueue((q) => q.messages),
    ),
    family(
      'queen_queue_pushed_messages_total',
      'counter',
      'Messages ever pushed to the queue (last_offset + 1 over its partitions).',
      perQueue((q) => q.pushed),
    ),
    family(
      'queen_queue_segments',
      'gauge',
      'Live segments of the queue.',
      perQueue((q) => q.segments),
    ),
    family(
      'queen_queue_segment_bytes',
      'gauge',
      "Compressed bytes of the queue's live segments.",
      perQueue((q) => q.segmentBytes),
    ),
    family(
      'queen_queue_sidecar_bytes',
      'gauge',
      "Bytes of the queue's transactionId hash sidecar (16 per message not yet purged).",
      perQueue((q) => q.sidecarBytes),
    ),
  ];
  if (rollup) {
    families.push(
      family(
        'queen_queue_push_messages_per_minute',
        'gauge',
        'Messages pushed to the queue in the last minute the retention cron rolled up.',
        perQueue((q) => q.pushedLastMinute),
      ),
      family(
        'queen_queue_metrics_age_seconds',
        'gauge',
        "Seconds since the retention cron last rolled up the queue's per-minute figures.",
        perQueue(() => s.rollupAgeSeconds),
      ),
    );
  }
  if (s.partitions) {
    const perPartition = (pick: (p: NonNullable<Snapshot['partitions']>[number]) => number) =>
      s.partitions!.map((p) => ({ labels: { queue: p.queue, partition: p.partition }, value: pick(p) }));
    families.push(
      family(
        'queen_partition_last_offset',
        'gauge',
        'Highest offset allocated in the partition (-1 before the first push).',
        perPartition((p) => p.lastOffset),
      ),
      family(
        'queen_partition_log_start',
        'gauge',
        'First offset the partition still holds; retention deleted everything below it.',
        perPartition((p) => p.logStart),
      ),
    );
  }
  families.push(
    family(
      'queen_consumer_partitions',
      'gauge',
      'Partitions the consumer group reads on the queue.',
      perGroup((g) => g.partitions),
    ),
    family(
      'queen_consumer_lag_messages',
      'gauge',
      'Messages the consumer group has not consumed on the queue (retention gaps are not lag).',
      perGroup((g) => g.lag),
    ),
    family(
      'queen_consumer_oldest_unconsumed_age_seconds',
      'gauge',
      'Age of the oldest message the consumer group has not consumed on the queue; 0 when caught up.',
      perGroup((g) => g.oldestAgeSeconds),
    ),
    family(
      'queen_consumer_in_flight_messages',
      'gauge',
      'Messages the consumer group holds under live leases on the queue.',
      perGroup((g) => g.inFlight),
    ),
    family(
      'queen_consumer_leased_partitions',
      'gauge',
      'Partitions of the queue with a live lease of the consumer group.',
      perGroup((g) => g.leased),
    ),
    family(
      'queen_consumer_consumed_messages_total',
      'counter',
      "Messages the consumer group's cursors have advanced past on the queue (resets when the group is deleted).",
      perGroup((g) => g.consumed),
    ),
  );
  families.push(...(await subscriptionFamilies(db, tenant, s.groups)));
  if (s.tables) {
    families.push(
      family(
        'queen_table_bytes',
        'gauge',
        'Size of a queen table with its indexes and TOAST, database-wide.',
        s.tables.map((t) => ({ labels: { table: t.table }, value: t.bytes })),
      ),
    );
  }
  const omitted = s.partitions
    ? null
    : `queen_partition_last_offset and queen_partition_log_start omitted: ${s.partitionCount} partitions exceed QUEEN_METRICS_PARTITION_SERIES=${options.partitionSeries}`;
  return { families, omitted };
}

/** /metrics (JSON): the tenant's lifetime pushes and their recent rate. */
export async function readMessageTotals(db: Queryable, { tenant }: TenantContext): Promise<{ pushed: number; pushedPerSecond: number }> {
  const [row] = await db.query<{ j: { pushed: number; pushedPerSecond: number } }>('SELECT queen.metrics_totals(p_tenant => $1) AS j', [
    tenant,
  ]);
  return row!.j;
}
