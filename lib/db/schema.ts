// The queue row and the log tables (docs/storage.md#the-tables), plus the subscription record
// docs/semantics.md#subscriptions needs. Storage parameters, STORAGE EXTERNAL and SQL functions
// live in custom migrations.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
});

const offset = (name: string) => bigint(name, { mode: 'number' });
const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const queen = pgSchema('queen');

export const queues = queen.table(
  'queues',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: text('tenant_id').notNull().default('default'),
    name: text('name').notNull(),
    namespace: text('namespace'),
    task: text('task'),
    leaseTime: integer('lease_time').notNull().default(60),
    retryLimit: integer('retry_limit').notNull().default(3),
    retryDelay: integer('retry_delay').notNull().default(0),
    deadLetterQueue: boolean('dead_letter_queue').notNull().default(true),
    dlqAfterMaxRetries: boolean('dlq_after_max_retries').notNull().default(true),
    delayedProcessing: integer('delayed_processing').notNull().default(0),
    windowBuffer: integer('window_buffer').notNull().default(0),
    retentionEnabled: boolean('retention_enabled').notNull().default(false),
    retentionSeconds: integer('retention_seconds').notNull().default(0),
    completedRetentionSeconds: integer('completed_retention_seconds').notNull().default(0),
    dedupWindowSeconds: integer('dedup_window_seconds').notNull().default(3600),
    encryptionEnabled: boolean('encryption_enabled').notNull().default(false),
    priority: integer('priority').notNull().default(0),
    maxSize: integer('max_size').notNull().default(0),
    ttl: integer('ttl').notNull().default(0),
    maxWaitTimeSeconds: integer('max_wait_time_seconds').notNull().default(0),
    createdAt: instant('created_at').notNull().defaultNow(),
    updatedAt: instant('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('queues_tenant_name_uk').on(t.tenantId, t.name),
    index('idx_queues_tenant_namespace').on(t.tenantId, t.namespace),
    index('idx_queues_tenant_task').on(t.tenantId, t.task),
  ],
);

export const logPartitions = queen.table(
  'log_partitions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    queueId: bigint('queue_id', { mode: 'number' })
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    name: text('name').notNull().default('Default'),
    lastOffset: offset('last_offset')
      .notNull()
      .default(sql`-1`),
    logStart: offset('log_start').notNull().default(0),
    txnsStart: offset('txns_start').notNull().default(0),
    lastWriteAt: instant('last_write_at').notNull().defaultNow(),
    createdAt: instant('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('log_partitions_queue_name_uk').on(t.queueId, t.name),
    index('idx_log_partitions_queue_write').on(t.queueId, t.lastWriteAt),
  ],
);

export const logSegments = queen.table(
  'log_segments',
  {
    partitionId: bigint('partition_id', { mode: 'number' })
      .notNull()
      .references(() => logPartitions.id, { onDelete: 'cascade' }),
    baseOffset: offset('base_offset').notNull(),
    endOffset: offset('end_offset').notNull(),
    createdAt: instant('created_at').notNull(),
    blob: bytea('blob').notNull(),
  },
  (t) => [primaryKey({ name: 'log_segments_pk', columns: [t.partitionId, t.baseOffset] })],
);

// No foreign key on purpose (docs/storage.md#the-sidecar): the purge path must never pay trigger
// cost.
export const logTxns = queen.table(
  'log_txns',
  {
    partitionId: bigint('partition_id', { mode: 'number' }).notNull(),
    baseOffset: offset('base_offset').notNull(),
    endOffset: offset('end_offset').notNull(),
    createdAt: instant('created_at').notNull(),
    hashes: bytea('hashes').notNull(),
    // One dedup key per message, stored by the push (docs/storage.md#the-duplicate-probe); null in rows from before 0025.
    keys: bigint('keys', { mode: 'bigint' }).array(),
  },
  (t) => [primaryKey({ name: 'log_txns_pk', columns: [t.partitionId, t.baseOffset] })],
);

export const logConsumers = queen.table(
  'log_consumers',
  {
    partitionId: bigint('partition_id', { mode: 'number' })
      .notNull()
      .references(() => logPartitions.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    committed: offset('committed')
      .notNull()
      .default(sql`-1`),
    batchEnd: offset('batch_end'),
    workerId: text('worker_id'),
    leaseExpiresAt: instant('lease_expires_at'),
    leaseAcquiredAt: instant('lease_acquired_at'),
    batchRetryCount: integer('batch_retry_count').notNull().default(0),
    // The offset the retry budget was charged for; the budget resets once the cursor passes it.
    retryOffset: offset('retry_offset'),
    // retryDelay: the partition is withheld from this group until then.
    retryNotBefore: instant('retry_not_before'),
    attemptOffset: offset('attempt_offset'),
    attemptCount: integer('attempt_count').notNull().default(0),
    totalConsumed: offset('total_consumed').notNull().default(0),
    createdAt: instant('created_at').notNull().defaultNow(),
    // The owning queue (filled by a trigger when an insert leaves it NULL), so one group's cursors
    // on one queue can be indexed for the wildcard pop.
    queueId: bigint('queue_id', { mode: 'number' }),
    // "This cursor may have something to deliver": set whenever pop/ack leave committed below
    // last_offset or a seek rewinds it, cleared when a pop finds the partition caught up.
    pending: boolean('pending').notNull().default(true),
  },
  (t) => [
    primaryKey({ name: 'log_consumers_pk', columns: [t.partitionId, t.consumerGroup] }),
    // The wildcard pop walks one group's pending cursors on a queue least recently served first
    // and stops at its batch (docs/locking.md#the-wildcard-scan): the order is the index's.
    index('idx_log_consumers_pending_served')
      .on(t.queueId, t.consumerGroup, t.leaseAcquiredAt.asc().nullsFirst(), t.partitionId)
      .where(sql`pending`),
  ],
);

// Where a group starts reading a queue, recorded at its first pop
// (docs/semantics.md#subscriptions). start_at NULL means from the beginning; otherwise the first
// segment with created_at >= start_at.
export const consumerSubscriptions = queen.table(
  'consumer_subscriptions',
  {
    queueId: bigint('queue_id', { mode: 'number' })
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    mode: text('mode').notNull(),
    startAt: instant('start_at'),
    subscribedAt: instant('subscribed_at').notNull().defaultNow(),
    // The group's last wildcard scan of this queue: partitions written since (minus slack) are
    // discovery candidates.
    scannedAt: instant('scanned_at'),
  },
  (t) => [primaryKey({ name: 'consumer_subscriptions_pk', columns: [t.queueId, t.consumerGroup] })],
);

export const logDlq = queen.table(
  'log_dlq',
  {
    partitionId: bigint('partition_id', { mode: 'number' })
      .notNull()
      .references(() => logPartitions.id, { onDelete: 'cascade' }),
    consumerGroup: text('consumer_group').notNull(),
    msgOffset: offset('msg_offset').notNull(),
    messageId: uuid('message_id').notNull(),
    transactionId: text('transaction_id').notNull(),
    traceId: uuid('trace_id'),
    producerSub: text('producer_sub'),
    // The payload exactly as stored in the frame: still encrypted when `encrypted` is set.
    payload: bytea('payload').notNull(),
    encrypted: boolean('encrypted').notNull().default(false),
    errorMessage: text('error_message'),
    retryCount: integer('retry_count').notNull().default(0),
    createdAt: instant('created_at').notNull(),
    failedAt: instant('failed_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'log_dlq_pk', columns: [t.partitionId, t.consumerGroup, t.msgOffset] }),
    index('idx_log_dlq_partition_txn').on(t.partitionId, t.transactionId),
    index('idx_log_dlq_failed_at').on(t.failedAt),
  ],
);

// Message traces (POST /api/v1/traces), kept off the hot path: nothing here is read or written by
// push, pop or ack, and the only foreign key hangs off queues (never updated by them), so a
// queue delete cascades here. partition_id has none, like log_txns; msg_offset is null when
// the sidecar hash was purged before the trace arrived.
export const messageTraces = queen.table(
  'message_traces',
  {
    id: uuid('id').primaryKey(),
    queueId: bigint('queue_id', { mode: 'number' })
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    partitionId: bigint('partition_id', { mode: 'number' }).notNull(),
    msgOffset: offset('msg_offset'),
    transactionId: text('transaction_id').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    eventType: text('event_type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: instant('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('idx_message_traces_message').on(t.queueId, t.partitionId, t.transactionId, t.createdAt),
    index('idx_message_traces_created_at').on(t.createdAt),
  ],
);

export const messageTraceNames = queen.table(
  'message_trace_names',
  {
    traceId: uuid('trace_id')
      .notNull()
      .references(() => messageTraces.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    traceName: text('trace_name').notNull(),
    createdAt: instant('created_at').notNull(),
  },
  (t) => [
    primaryKey({ name: 'message_trace_names_pk', columns: [t.traceId, t.traceName] }),
    index('idx_message_trace_names_name').on(t.tenantId, t.traceName, t.createdAt),
  ],
);

// Per (queue, minute) figures for the dashboard's history (docs/semantics.md#figures), written only by the retention
// cron, never by push/pop/ack: pushes recomputed from segments for closed minutes, dead letters and
// partitions by their timestamps, retention by rule, and gauges sampled when they change.
export const queueMinuteStats = queen.table(
  'queue_minute_stats',
  {
    queueId: bigint('queue_id', { mode: 'number' })
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    bucket: instant('bucket').notNull(),
    pushedMessages: offset('pushed_messages').notNull().default(0),
    pushedSegments: offset('pushed_segments').notNull().default(0),
    pushedBytes: offset('pushed_bytes').notNull().default(0),
    partitionsCreated: integer('partitions_created').notNull().default(0),
    dlqAdded: integer('dlq_added').notNull().default(0),
    retentionMessages: offset('retention_messages').notNull().default(0),
    completedRetentionMessages: offset('completed_retention_messages').notNull().default(0),
    evictionMessages: offset('eviction_messages').notNull().default(0),
    retentionEvents: integer('retention_events').notNull().default(0),
    // The gauges of the last sample taken in this minute; NULL when none was.
    sampledAt: instant('sampled_at'),
    partitions: integer('partitions'),
    held: offset('held'),
    lagMessages: offset('lag_messages'),
    inFlight: offset('in_flight'),
    laggingPairs: integer('lagging_pairs'),
    // Over the (partition, group) pairs with lag: the oldest unconsumed segment time, and the mean
    // of those times, so the lag at any later instant t is t minus them until the next sample.
    oldestUnconsumedAt: instant('oldest_unconsumed_at'),
    meanUnconsumedAt: instant('mean_unconsumed_at'),
    consumedTotal: offset('consumed_total'),
    // Messages the queue's cursors advanced since the previous sample.
    consumed: offset('consumed'),
  },
  (t) => [
    primaryKey({ name: 'queue_minute_stats_pk', columns: [t.queueId, t.bucket] }),
    // The cron drops rows older than a week across all queues.
    index('idx_queue_minute_stats_bucket').on(t.bucket),
  ],
);

// The rollup's watermarks: one row.
export const minuteStatsState = queen.table('minute_stats_state', {
  id: boolean('id').primaryKey().default(true),
  startedAt: instant('started_at').notNull(),
  // Minutes before this were recomputed from the log.
  rolledTo: instant('rolled_to').notNull(),
  sampledAt: instant('sampled_at').notNull(),
});

// Per-tenant switches (docs/semantics.md#maintenance-mode): maintenance and pop maintenance, read
// by pop.
export const tenantSettings = queen.table('tenant_settings', {
  tenantId: text('tenant_id').primaryKey(),
  maintenance: boolean('maintenance').notNull().default(false),
  popMaintenance: boolean('pop_maintenance').notNull().default(false),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

// Push delivery (docs/delivery.md): a subscription POSTs its consumer group's batches to a URL.
// headers, secret and previous_secret are stored sealed (lib/broker/delivery/secrets.ts).
export const subscriptions = queen.table(
  'subscriptions',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    queueId: bigint('queue_id', { mode: 'number' })
      .notNull()
      .references(() => queues.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    consumerGroup: text('consumer_group').notNull(),
    url: text('url').notNull(),
    state: text('state').notNull().default('active'),
    pausedReason: text('paused_reason'),
    batchSize: integer('batch_size').notNull().default(10),
    maxInFlight: integer('max_in_flight').notNull().default(16),
    timeoutMs: integer('timeout_ms').notNull().default(15000),
    rateLimit: integer('rate_limit').notNull().default(0),
    retryBaseMs: integer('retry_base_ms').notNull().default(1000),
    retryMaxMs: integer('retry_max_ms').notNull().default(300000),
    subscriptionMode: text('subscription_mode').notNull().default('all'),
    disableAfterMs: offset('disable_after_ms').notNull().default(86400000),
    headers: text('headers').notNull().default('{}'),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretUntil: instant('previous_secret_until'),
    failingSince: instant('failing_since'),
    delivered: offset('delivered').notNull().default(0),
    failedAttempts: offset('failed_attempts').notNull().default(0),
    deadLettered: offset('dead_lettered').notNull().default(0),
    lastAttemptAt: instant('last_attempt_at'),
    createdAt: instant('created_at').notNull().defaultNow(),
    updatedAt: instant('updated_at').notNull().defaultNow(),
    // The dispatcher's (lib/broker/delivery/claim.ts): the rateLimit token bucket, and the time
    // before which a throttling endpoint (429/503 with Retry-After) gets nothing.
    rateTokens: doublePrecision('rate_tokens').notNull().default(0),
    rateAt: instant('rate_at'),
    throttledUntil: instant('throttled_until'),
  },
  (t) => [
    uniqueIndex('subscriptions_queue_name_uk').on(t.queueId, t.name),
    index('idx_subscriptions_tenant_queue').on(t.tenantId, t.queueId),
    index('idx_subscriptions_active')
      .on(t.queueId)
      .where(sql`state = 'active'`),
    check('subscriptions_state_check', sql`state IN ('active', 'paused')`),
  ],
);

// One row per delivery attempt, newest read first; retention drops those older than 7 days.
export const subscriptionAttempts = queen.table(
  'subscription_attempts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    subscriptionId: uuid('subscription_id')
      .notNull()
      .references(() => subscriptions.id, { onDelete: 'cascade' }),
    partitionId: bigint('partition_id', { mode: 'number' }).notNull(),
    fromOffset: offset('from_offset').notNull(),
    toOffset: offset('to_offset').notNull(),
    webhookId: text('webhook_id').notNull(),
    attempt: integer('attempt').notNull(),
    outcome: text('outcome').notNull(),
    status: integer('status'),
    error: text('error'),
    latencyMs: integer('latency_ms').notNull(),
    response: text('response'),
    at: instant('at').notNull().defaultNow(),
  },
  (t) => [index('idx_subscription_attempts_sub').on(t.subscriptionId, t.id.desc())],
);

// The dispatcher's state per (subscription, partition) (docs/delivery.md): the outstanding batch a
// retry sends again exactly (same webhook-id), and the claim in flight on it.
export const subscriptionPartitions = queen.table(
  'subscription_partitions',
  {
    subscriptionId: uuid('subscription_id')
      .notNull()
      .references(() => subscriptions.id, { onDelete: 'cascade' }),
    // No foreign key: its check would wait for a push holding the partition row (docs/locking.md).
    partitionId: bigint('partition_id', { mode: 'number' }).notNull(),
    fromOffset: offset('from_offset'),
    toOffset: offset('to_offset'),
    webhookId: text('webhook_id'),
    leaseId: text('lease_id'),
    leaseUntil: instant('lease_until'),
    nextAttemptAt: instant('next_attempt_at'),
  },
  (t) => [
    primaryKey({ name: 'subscription_partitions_pk', columns: [t.subscriptionId, t.partitionId] }),
    index('idx_subscription_partitions_in_flight')
      .on(t.subscriptionId)
      .where(sql`lease_until IS NOT NULL`),
  ],
);
