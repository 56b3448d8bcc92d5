-- Queues: configure (SPEC §3.6), describe, list, delete, and the figures the resource routes,
-- the dashboard and /metrics share.

-- Every SPEC §3.6 option of a queue row, as the wire names them.
CREATE OR REPLACE FUNCTION queen.queue_options(q queen.queues)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT jsonb_build_object(
    'leaseTime', q.lease_time, 'retryLimit', q.retry_limit, 'retryDelay', q.retry_delay,
    'deadLetterQueue', q.dead_letter_queue, 'dlqAfterMaxRetries', q.dlq_after_max_retries,
    'delayedProcessing', q.delayed_processing, 'windowBuffer', q.window_buffer,
    'retentionEnabled', q.retention_enabled, 'retentionSeconds', q.retention_seconds,
    'completedRetentionSeconds', q.completed_retention_seconds,
    'dedupWindowSeconds', q.dedup_window_seconds, 'encryptionEnabled', q.encryption_enabled,
    'priority', q.priority, 'maxSize', q.max_size, 'ttl', q.ttl,
    'maxWaitTimeSeconds', q.max_wait_time_seconds)
$function$;

-- Upsert with merge semantics: a sent option overwrites, an omitted one keeps its stored value, or
-- takes the default when this call creates the queue (leaseTime 300 there, SPEC §3.6).
CREATE OR REPLACE FUNCTION queen.configure_queue(p_tenant text, p_name text, p_namespace text, p_task text, p_options jsonb)
 RETURNS jsonb
 LANGUAGE sql
AS $function$
  WITH up AS (
  INSERT INTO queen.queues AS q (
    tenant_id, name, namespace, task, lease_time, retry_limit, retry_delay, dead_letter_queue,
    dlq_after_max_retries, delayed_processing, window_buffer, retention_enabled, retention_seconds,
    completed_retention_seconds, dedup_window_seconds, encryption_enabled, priority, max_size, ttl,
    max_wait_time_seconds
  ) VALUES (
    p_tenant, p_name,
    COALESCE(p_namespace, CASE WHEN strpos(p_name, '.') > 0 THEN nullif(left(p_name, strpos(p_name, '.') - 1), '') END),
    COALESCE(p_task, CASE WHEN strpos(p_name, '.') > 0 THEN nullif(substr(p_name, strpos(p_name, '.') + 1), '') END),
    COALESCE((p_options->>'leaseTime')::int, 300),
    COALESCE((p_options->>'retryLimit')::int, 3),
    COALESCE((p_options->>'retryDelay')::int, 0),
    COALESCE((p_options->>'deadLetterQueue')::boolean, true),
    COALESCE((p_options->>'dlqAfterMaxRetries')::boolean, true),
    COALESCE((p_options->>'delayedProcessing')::int, 0),
    COALESCE((p_options->>'windowBuffer')::int, 0),
    COALESCE((p_options->>'retentionEnabled')::boolean, false),
    COALESCE((p_options->>'retentionSeconds')::int, 0),
    COALESCE((p_options->>'completedRetentionSeconds')::int, 0),
    COALESCE((p_options->>'dedupWindowSeconds')::int, 3600),
    COALESCE((p_options->>'encryptionEnabled')::boolean, false),
    COALESCE((p_options->>'priority')::int, 0),
    COALESCE((p_options->>'maxSize')::int, 0),
    COALESCE((p_options->>'ttl')::int, 0),
    COALESCE((p_options->>'maxWaitTimeSeconds')::int, 0)
  )
  ON CONFLICT (tenant_id, name) DO UPDATE SET
    namespace = COALESCE(p_namespace, q.namespace),
    task = COALESCE(p_task, q.task),
    lease_time = COALESCE((p_options->>'leaseTime')::int, q.lease_time),
    retry_limit = COALESCE((p_options->>'retryLimit')::int, q.retry_limit),
    retry_delay = COALESCE((p_options->>'retryDelay')::int, q.retry_delay),
    dead_letter_queue = COALESCE((p_options->>'deadLetterQueue')::boolean, q.dead_letter_queue),
    dlq_after_max_retries = COALESCE((p_options->>'dlqAfterMaxRetries')::boolean, q.dlq_after_max_retries),
    delayed_processing = COALESCE((p_options->>'delayedProcessing')::int, q.delayed_processing),
    window_buffer = COALESCE((p_options->>'windowBuffer')::int, q.window_buffer),
    retention_enabled = COALESCE((p_options->>'retentionEnabled')::boolean, q.retention_enabled),
    retention_seconds = COALESCE((p_options->>'retentionSeconds')::int, q.retention_seconds),
    completed_retention_seconds = COALESCE((p_options->>'completedRetentionSeconds')::int, q.completed_retention_seconds),
    dedup_window_seconds = COALESCE((p_options->>'dedupWindowSeconds')::int, q.dedup_window_seconds),
    encryption_enabled = COALESCE((p_options->>'encryptionEnabled')::boolean, q.encryption_enabled),
    priority = COALESCE((p_options->>'priority')::int, q.priority),
    max_size = COALESCE((p_options->>'maxSize')::int, q.max_size),
    ttl = COALESCE((p_options->>'ttl')::int, q.ttl),
    max_wait_time_seconds = COALESCE((p_options->>'maxWaitTimeSeconds')::int, q.max_wait_time_seconds),
    updated_at = now()
  RETURNING q AS row, (q.xmax = 0) AS created
  )
  SELECT jsonb_build_object('created', up.created, 'id', (up.row).id::text, 'name', (up.row).name,
           'namespace', (up.row).namespace, 'task', (up.row).task, 'options', queen.queue_options(up.row))
    FROM up
$function$;

-- GET /resources/queues/:queue: ours (watermarks, per-group committed and lag) plus Queen's
-- get_queue_v2 keys (per-partition stats, oldest and newest message times, queue totals).
CREATE OR REPLACE FUNCTION queen.describe_queue(p_tenant text, p_name text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  WITH f AS (SELECT * FROM queen.partition_figures(p_tenant, p_name))
  SELECT jsonb_build_object(
           'id', q.id::text, 'name', q.name, 'namespace', q.namespace, 'task', q.task,
           'createdAt', queen.admin_iso(q.created_at), 'updatedAt', queen.admin_iso(q.updated_at),
           'options', queen.queue_options(q),
           'partitions', COALESCE((
             SELECT jsonb_agg(jsonb_build_object(
                      'id', p.id::text, 'name', p.name, 'last_offset', p.last_offset,
                      'log_start', p.log_start, 'txns_start', p.txns_start,
                      'messages', p.last_offset - p.log_start + 1,
                      'stats', queen.figures_json(f.total, f.pending, f.processing, f.completed, f.dead_letter),
                      'oldestMessage', queen.admin_iso(f.oldest), 'newestMessage', queen.admin_iso(f.newest),
                      'createdAt', queen.admin_iso(p.created_at), 'lastWriteAt', queen.admin_iso(p.last_write_at),
                      'consumerGroups', COALESCE((
                        SELECT jsonb_agg(jsonb_build_object(
                                 'consumerGroup', c.consumer_group, 'committed', c.committed,
                                 'lag', p.last_offset - GREATEST(c.committed, p.log_start - 1),
                                 'leased', c.batch_end IS NOT NULL AND c.lease_expires_at > now(),
                                 'leaseExpiresAt', queen.admin_iso(c.lease_expires_at),
                                 'retryCount', c.batch_retry_count) ORDER BY c.consumer_group)
                          FROM queen.log_consumers c WHERE c.partition_id = p.id), '[]'::jsonb))
                    ORDER BY p.name)
               FROM queen.log_partitions p JOIN f ON f.partition_id = p.id), '[]'::jsonb),
           'totals', (SELECT queen.figures_json(COALESCE(sum(f.total), 0)::bigint, COALESCE(sum(f.pending), 0)::bigint,
                                                COALESCE(sum(f.processing), 0)::bigint, COALESCE(sum(f.completed), 0)::bigint,
                                                COALESCE(sum(f.dead_letter), 0)::bigint) FROM f))
    FROM queen.queues q
   WHERE q.tenant_id = p_tenant AND q.name = p_name
$function$;

-- log_txns has no foreign key (seed), so its rows go explicitly. The queue row is locked first so
-- no partition can be created under it while the cascade runs.
CREATE OR REPLACE FUNCTION queen.delete_queue(p_tenant text, p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  qid BIGINT;
BEGIN
  SELECT q.id INTO qid FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_name FOR UPDATE;
  IF qid IS NULL THEN RETURN false; END IF;
  WITH gone AS (DELETE FROM queen.log_partitions p WHERE p.queue_id = qid RETURNING p.id)
  DELETE FROM queen.log_txns t USING gone WHERE t.partition_id = gone.id;
  DELETE FROM queen.queues q WHERE q.id = qid;
  RETURN true;
END
$function$;

-- GET /resources/queues: Queen's messages {total, pending, processing} (pending without in-flight), plus completed.
CREATE OR REPLACE FUNCTION queen.list_queues(p_tenant text, p_namespace text, p_task text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  WITH f AS (
    SELECT f.queue_id, count(*) AS partitions, sum(f.total) AS total, sum(f.pending) AS pending,
           sum(f.processing) AS processing, sum(f.completed) AS completed
      FROM queen.partition_figures(p_tenant, NULL) f GROUP BY f.queue_id
  )
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'id', q.id::text, 'name', q.name, 'namespace', q.namespace, 'task', q.task,
           'createdAt', queen.admin_iso(q.created_at), 'partitions', COALESCE(f.partitions, 0),
           'messages', jsonb_build_object('total', COALESCE(f.total, 0), 'pending', COALESCE(f.pending, 0),
                                          'processing', COALESCE(f.processing, 0), 'completed', COALESCE(f.completed, 0)))
           ORDER BY q.name), '[]'::jsonb)
    FROM queen.queues q LEFT JOIN f ON f.queue_id = q.id
   WHERE q.tenant_id = p_tenant
     AND (p_namespace IS NULL OR q.namespace = p_namespace)
     AND (p_task IS NULL OR q.task = p_task)
$function$;

-- Timestamps leave as ISO 8601 UTC text whatever the session's TimeZone.
CREATE OR REPLACE FUNCTION queen.admin_iso(t timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $function$;

-- Queen's message-count object; failed is always null (nothing counts it).
CREATE OR REPLACE FUNCTION queen.figures_json(total bigint, pending bigint, processing bigint, completed bigint, dead_letter bigint)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT jsonb_build_object('total', total, 'pending', pending, 'processing', processing, 'completed', completed,
                            'failed', NULL, 'deadLetter', dead_letter)
$function$;

-- avg, median, min and max of a set of figures, rounded to hundredths; all 0 for an empty set.
CREATE OR REPLACE FUNCTION queen.spread_json(v bigint[])
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT jsonb_build_object(
    'avg', COALESCE(round(avg(x)::numeric, 2), 0),
    'median', COALESCE(round((percentile_cont(0.5) WITHIN GROUP (ORDER BY x))::numeric, 2), 0),
    'min', COALESCE(min(x), 0), 'max', COALESCE(max(x), 0))
    FROM unnest(v) AS x
$function$;

-- Every (partition, consumer group) position on the given queues: the cursor rows, plus each
-- subscribed group on the partitions it has no cursor on yet, placed where its first pop would
-- start (SPEC §3.2). Lag is last_offset - max(committed, log_start - 1): gaps are not lag (SPEC
-- §4). `since` is when the oldest message it has not consumed was pushed (the segment holding its
-- next wanted offset: one backward step on the primary key, inline, as a function call costs
-- several times the probe), NULL when it has nothing to consume.
CREATE OR REPLACE FUNCTION queen.group_positions(p_queues bigint[])
 RETURNS TABLE(queue_id bigint, partition_id bigint, consumer_group text, last_offset bigint, log_start bigint, committed bigint, lag bigint, in_flight bigint, worker_id text, lease_acquired_at timestamp with time zone, total_consumed bigint, since timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT x.queue_id, x.partition_id, x.consumer_group, x.last_offset, x.log_start, x.committed, x.lag, x.in_flight,
         x.worker_id, x.lease_acquired_at, x.total_consumed,
         (SELECT s.created_at FROM queen.log_segments s
           WHERE x.lag > 0 AND s.partition_id = x.partition_id AND s.base_offset <= GREATEST(x.committed + 1, x.log_start)
           ORDER BY s.base_offset DESC LIMIT 1)
    FROM (
      SELECT p.queue_id, p.id AS partition_id, c.consumer_group, p.last_offset, p.log_start, c.committed,
             p.last_offset - GREATEST(c.committed, p.log_start - 1) AS lag,
             CASE WHEN c.batch_end IS NOT NULL AND c.lease_expires_at > now()
                  THEN GREATEST(c.batch_end - GREATEST(c.committed, p.log_start - 1), 0) ELSE 0 END AS in_flight,
             CASE WHEN c.batch_end IS NOT NULL AND c.lease_expires_at > now() THEN c.worker_id END AS worker_id,
             c.lease_acquired_at, c.total_consumed
        FROM queen.log_partitions p
        JOIN queen.log_consumers c ON c.partition_id = p.id
       WHERE p.queue_id = ANY (p_queues)
      UNION ALL
      SELECT p.queue_id, p.id, s.consumer_group, p.last_offset, p.log_start, f.committed,
             p.last_offset - GREATEST(f.committed, p.log_start - 1), 0, NULL, NULL, 0
        FROM queen.consumer_subscriptions s
        JOIN queen.log_partitions p ON p.queue_id = s.queue_id
        CROSS JOIN LATERAL (
          SELECT CASE WHEN s.start_at IS NULL THEN -1
                      WHEN p.last_write_at < s.start_at - interval '2 minutes' THEN p.last_offset
                      ELSE queen.offset_at_time(p.id, s.start_at) - 1 END AS committed) f
       WHERE s.queue_id = ANY (p_queues)
         AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                          WHERE c.partition_id = p.id AND c.consumer_group = s.consumer_group)
    ) x
$function$;

-- Queue resources with Queen's figures (SPEC §3.7, §3.8b): per partition, the messages held and how
-- they split between done, in flight and pending; the overview. All computed from the log per call.
-- done: the held offsets every group with a cursor has committed past; processing: the largest
-- live lease on the partition, within what is not done; pending: the rest. total = completed +
-- processing + pending; deadLetter counts the partition's DLQ rows (a dead letter is also done).
--
-- Per partition, now: held messages; the lag of its slowest position (every held message when
-- nobody reads it), split into leased (processing) and the rest (pending); dead letters; lifetime
-- pushes; the cursors' lifetime consumption; over its lagging positions their summed lag, count,
-- oldest unconsumed time and the sum of those times (for a mean); and the last delivery.
CREATE OR REPLACE FUNCTION queen.partition_figures(p_tenant text, p_queue text)
 RETURNS TABLE(queue_id bigint, partition_id bigint, total bigint, pending bigint, processing bigint, completed bigint, dead_letter bigint, lifetime bigint, oldest timestamp with time zone, newest timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT p.queue_id, p.id, p.last_offset - p.log_start + 1,
         p.last_offset - d.done - LEAST(p.last_offset - d.done, c.leased),
         LEAST(p.last_offset - d.done, c.leased),
         d.done - (p.log_start - 1),
         (SELECT count(*) FROM queen.log_dlq x WHERE x.partition_id = p.id),
         p.last_offset + 1,
         CASE WHEN p.last_offset >= p.log_start THEN queen.segment_time_at(p.id, p.log_start) END,
         CASE WHEN p.last_offset >= p.log_start THEN queen.segment_time_at(p.id, p.last_offset) END
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id
    CROSS JOIN LATERAL (
      SELECT min(lc.committed) AS low,
             COALESCE(max(lc.batch_end - GREATEST(lc.committed, p.log_start - 1))
                        FILTER (WHERE lc.batch_end IS NOT NULL AND lc.lease_expires_at > now()), 0) AS leased
        FROM queen.log_consumers lc WHERE lc.partition_id = p.id) c
    CROSS JOIN LATERAL (SELECT GREATEST(COALESCE(c.low, p.log_start - 1), p.log_start - 1) AS done) d
   WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
$function$;

-- Queue resources with Queen's figures (SPEC §3.7, §3.8b): per partition, the messages held and how
-- they split between done, in flight and pending; the overview. All computed from the log per call.
-- done: the held offsets every group with a cursor has committed past; processing: the largest
-- live lease on the partition, within what is not done; pending: the rest. total = completed +
-- processing + pending; deadLetter counts the partition's DLQ rows (a dead letter is also done).
--
-- Per partition, now: held messages; the lag of its slowest position (every held message when
-- nobody reads it), split into leased (processing) and the rest (pending); dead letters; lifetime
-- pushes; the cursors' lifetime consumption; over its lagging positions their summed lag, count,
-- oldest unconsumed time and the sum of those times (for a mean); and the last delivery.
CREATE OR REPLACE FUNCTION queen.partition_figures(p_queues bigint[])
 RETURNS TABLE(queue_id bigint, partition_id bigint, held bigint, lag bigint, pending bigint, processing bigint, dead_letter bigint, lifetime_pushed bigint, total_consumed bigint, lag_messages bigint, lagging_pairs bigint, oldest_unconsumed_at timestamp with time zone, unconsumed_epoch_sum double precision, last_delivery_at timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
  WITH per AS (
    SELECT g.partition_id, min(g.committed) AS slowest, max(g.in_flight) AS in_flight,
           sum(g.total_consumed) AS consumed, sum(g.lag) AS lag_messages, count(*) FILTER (WHERE g.lag > 0) AS lagging,
           min(g.since) AS oldest, sum(extract(epoch FROM g.since)) AS epoch_sum, max(g.lease_acquired_at) AS last_delivery
      FROM queen.group_positions(p_queues) g
     GROUP BY g.partition_id
  ), dead AS (
    SELECT d.partition_id, count(*) AS n
      FROM queen.log_dlq d JOIN queen.log_partitions dp ON dp.id = d.partition_id
     WHERE dp.queue_id = ANY (p_queues)
     GROUP BY d.partition_id
  )
  SELECT p.queue_id, p.id, p.last_offset - p.log_start + 1, x.lag, GREATEST(x.lag - x.in_flight, 0), x.in_flight,
         COALESCE(dead.n, 0), p.last_offset + 1, COALESCE(per.consumed, 0), COALESCE(per.lag_messages, 0),
         COALESCE(per.lagging, 0), per.oldest, per.epoch_sum, per.last_delivery
    FROM queen.log_partitions p
    LEFT JOIN per ON per.partition_id = p.id
    LEFT JOIN dead ON dead.partition_id = p.id
    CROSS JOIN LATERAL (
      SELECT p.last_offset - GREATEST(per.slowest, p.log_start - 1) AS lag,
             LEAST(COALESCE(per.in_flight, 0), p.last_offset - GREATEST(per.slowest, p.log_start - 1)) AS in_flight) x
   WHERE p.queue_id = ANY (p_queues)
$function$;

-- partition_figures summed per queue (queues without partitions too); the mean unconsumed time is
-- over the lagging positions, to the millisecond so that unchanged figures compare equal.
CREATE OR REPLACE FUNCTION queen.queue_figures(p_queues bigint[])
 RETURNS TABLE(queue_id bigint, partitions bigint, held bigint, lag bigint, pending bigint, processing bigint, dead_letter bigint, lifetime_pushed bigint, total_consumed bigint, lag_messages bigint, lagging_pairs bigint, oldest_unconsumed_at timestamp with time zone, mean_unconsumed_at timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT q.id, count(f.partition_id), COALESCE(sum(f.held), 0), COALESCE(sum(f.lag), 0), COALESCE(sum(f.pending), 0),
         COALESCE(sum(f.processing), 0), COALESCE(sum(f.dead_letter), 0), COALESCE(sum(f.lifetime_pushed), 0),
         COALESCE(sum(f.total_consumed), 0), COALESCE(sum(f.lag_messages), 0), COALESCE(sum(f.lagging_pairs), 0),
         min(f.oldest_unconsumed_at),
         date_trunc('milliseconds', to_timestamp(sum(f.unconsumed_epoch_sum) / NULLIF(sum(f.lagging_pairs), 0)))
    FROM unnest(p_queues) q(id)
    LEFT JOIN queen.partition_figures(p_queues) f ON f.queue_id = q.id
   GROUP BY q.id
$function$;

-- GET /resources/overview (Queen's get_system_overview_v3 keys). Lag figures are over the
-- (group, partition) pairs with a backlog; ingestedPerSecond is the messages whose segments were
-- written in the last 5 minutes, over 300 s (offsets are contiguous there, and only a partition
-- written since, less the last_write_at slack, can hold any). No hot-path counter exists for
-- acks, so processedPerSecond and failed are null.
CREATE OR REPLACE FUNCTION queen.resources_overview(p_tenant text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  WITH f AS (SELECT * FROM queen.partition_figures(p_tenant, NULL)),
  g AS (SELECT x.lag, x.age FROM queen.group_partitions(p_tenant, NULL, NULL) x WHERE x.lag > 0),
  recent AS (
    SELECT COALESCE(sum(p.last_offset + 1 - queen.offset_at_time(p.id, now() - interval '5 minutes')), 0) AS n
      FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
     WHERE q.tenant_id = p_tenant AND p.last_write_at >= now() - interval '7 minutes'
  ), qs AS (
    SELECT count(*) AS queues, count(DISTINCT q.namespace) AS namespaces, count(DISTINCT q.task) AS tasks
      FROM queen.queues q WHERE q.tenant_id = p_tenant
  )
  SELECT jsonb_build_object(
    'queues', qs.queues, 'partitions', (SELECT count(*) FROM f), 'namespaces', qs.namespaces, 'tasks', qs.tasks,
    'messages', (SELECT queen.figures_json(COALESCE(sum(f.total), 0)::bigint, COALESCE(sum(f.pending), 0)::bigint,
                                           COALESCE(sum(f.processing), 0)::bigint, COALESCE(sum(f.completed), 0)::bigint,
                                           COALESCE(sum(f.dead_letter), 0)::bigint) FROM f),
    'lag', jsonb_build_object('time', queen.spread_json(ARRAY(SELECT g.age FROM g)),
                              'offset', queen.spread_json(ARRAY(SELECT g.lag FROM g))),
    'throughput', jsonb_build_object('ingestedPerSecond', round(recent.n / 300.0, 2), 'processedPerSecond', NULL),
    'timestamp', queen.admin_iso(now()), 'statsAge', 0,
    'lifetimePushed', (SELECT COALESCE(sum(f.lifetime), 0) FROM f))
    FROM qs, recent
$function$;
