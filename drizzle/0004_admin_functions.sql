-- Configure, resources, consumer groups, seek and retention (SPEC §3.6, §3.7, §4).
-- Timestamps leave as ISO 8601 UTC text whatever the session's TimeZone.
CREATE OR REPLACE FUNCTION queen.admin_iso(t TIMESTAMPTZ) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
--> statement-breakpoint
-- Every SPEC §3.6 option of a queue row, as the wire names them.
CREATE OR REPLACE FUNCTION queen.queue_options(q queen.queues) RETURNS JSONB
LANGUAGE sql IMMUTABLE
AS $$
  SELECT jsonb_build_object(
    'leaseTime', q.lease_time, 'retryLimit', q.retry_limit, 'retryDelay', q.retry_delay,
    'deadLetterQueue', q.dead_letter_queue, 'dlqAfterMaxRetries', q.dlq_after_max_retries,
    'delayedProcessing', q.delayed_processing, 'windowBuffer', q.window_buffer,
    'retentionEnabled', q.retention_enabled, 'retentionSeconds', q.retention_seconds,
    'completedRetentionSeconds', q.completed_retention_seconds,
    'dedupWindowSeconds', q.dedup_window_seconds, 'encryptionEnabled', q.encryption_enabled,
    'priority', q.priority, 'maxSize', q.max_size, 'ttl', q.ttl,
    'maxWaitTimeSeconds', q.max_wait_time_seconds)
$$;
--> statement-breakpoint
-- Upsert with merge semantics: a sent option overwrites, an omitted one keeps its stored value, or
-- takes the default when this call creates the queue (leaseTime 300 there, SPEC §3.6).
CREATE OR REPLACE FUNCTION queen.configure_queue(
  p_tenant TEXT, p_name TEXT, p_namespace TEXT, p_task TEXT, p_options JSONB
) RETURNS JSONB
LANGUAGE sql VOLATILE
AS $$
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
$$;
--> statement-breakpoint
-- The first offset whose segment was created at or after p_ts, or last_offset + 1. created_at is
-- monotone in base_offset (seed invariant 2), so "created_at of the first segment at or after x"
-- is monotone in x and a binary search of forward steps on the primary key finds it.
CREATE OR REPLACE FUNCTION queen.offset_at_time(p_partition BIGINT, p_ts TIMESTAMPTZ) RETURNS BIGINT
LANGUAGE plpgsql STABLE
AS $$
DECLARE
  lo BIGINT;
  hi BIGINT;
  mid BIGINT;
  t TIMESTAMPTZ;
  found_base BIGINT;
BEGIN
  SELECT p.log_start, p.last_offset + 1 INTO lo, hi FROM queen.log_partitions p WHERE p.id = p_partition;
  IF NOT FOUND THEN RETURN NULL; END IF;
  WHILE lo < hi LOOP
    mid := lo + (hi - lo) / 2;
    SELECT s.created_at INTO t FROM queen.log_segments s
     WHERE s.partition_id = p_partition AND s.base_offset >= mid ORDER BY s.base_offset LIMIT 1;
    IF NOT FOUND OR t >= p_ts THEN hi := mid; ELSE lo := mid + 1; END IF;
  END LOOP;
  SELECT s.base_offset INTO found_base FROM queen.log_segments s
   WHERE s.partition_id = p_partition AND s.base_offset >= lo ORDER BY s.base_offset LIMIT 1;
  IF found_base IS NULL THEN
    SELECT p.last_offset + 1 INTO found_base FROM queen.log_partitions p WHERE p.id = p_partition;
  END IF;
  RETURN found_base;
END
$$;
--> statement-breakpoint
-- Creation time of the segment holding offset p_offset (or the nearest one before it): one
-- backward step on the primary key.
CREATE OR REPLACE FUNCTION queen.segment_time_at(p_partition BIGINT, p_offset BIGINT) RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE
AS $$
  SELECT s.created_at FROM queen.log_segments s
   WHERE s.partition_id = p_partition AND s.base_offset <= p_offset
   ORDER BY s.base_offset DESC LIMIT 1
$$;
--> statement-breakpoint
-- log_txns has no foreign key (seed), so its rows go explicitly. The queue row is locked first so
-- no partition can be created under it while the cascade runs.
CREATE OR REPLACE FUNCTION queen.delete_queue(p_tenant TEXT, p_name TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE
AS $$
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
$$;
--> statement-breakpoint
-- Moves one group's cursors on a queue (SPEC §3.7): to the end, to a timestamp, or to an offset of
-- one partition. Creates missing cursor rows, clears leases and resets retry/attempt counters.
-- Returns NULL when the queue does not exist, '[]' when the named partition does not.
CREATE OR REPLACE FUNCTION queen.seek_consumer_group(
  p_tenant TEXT, p_queue TEXT, p_group TEXT, p_to_end BOOLEAN, p_ts TIMESTAMPTZ, p_partition TEXT, p_offset BIGINT
) RETURNS JSONB
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  qid BIGINT;
  result JSONB;
BEGIN
  SELECT q.id INTO qid FROM queen.queues q WHERE q.tenant_id = p_tenant AND q.name = p_queue;
  IF qid IS NULL THEN RETURN NULL; END IF;
  IF p_partition IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM queen.log_partitions p WHERE p.queue_id = qid AND p.name = p_partition) THEN
    RETURN '[]'::jsonb;
  END IF;
  INSERT INTO queen.consumer_subscriptions (queue_id, consumer_group, mode, start_at)
  VALUES (qid, p_group, 'all', NULL) ON CONFLICT DO NOTHING;
  WITH target AS (
    SELECT p.id, p.name,
           LEAST(GREATEST(
             CASE WHEN p_to_end THEN p.last_offset
                  WHEN p_ts IS NOT NULL THEN queen.offset_at_time(p.id, p_ts) - 1
                  ELSE p_offset - 1 END,
             p.log_start - 1), p.last_offset) AS committed
      FROM queen.log_partitions p
     WHERE p.queue_id = qid AND (p_partition IS NULL OR p.name = p_partition)
  ), moved AS (
    INSERT INTO queen.log_consumers AS c (partition_id, consumer_group, committed)
    SELECT t.id, p_group, t.committed FROM target t
    ON CONFLICT (partition_id, consumer_group) DO UPDATE SET
      committed = EXCLUDED.committed, batch_end = NULL, worker_id = NULL, lease_expires_at = NULL,
      lease_acquired_at = NULL, batch_retry_count = 0, retry_offset = NULL, retry_not_before = NULL,
      attempt_offset = NULL, attempt_count = 0
    RETURNING c.partition_id, c.committed
  )
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'partitionId', t.id::text, 'partition', t.name, 'committed', m.committed,
           'nextOffset', m.committed + 1) ORDER BY t.name), '[]'::jsonb)
    INTO result
    FROM moved m JOIN target t ON t.id = m.partition_id;
  RETURN result;
END
$$;
--> statement-breakpoint
-- Removes a group's cursors and subscription on one queue or, with p_queue NULL, on every queue of
-- the tenant. Returns how many cursor and subscription rows went.
CREATE OR REPLACE FUNCTION queen.delete_consumer_group(p_tenant TEXT, p_group TEXT, p_queue TEXT)
RETURNS TABLE (cursors BIGINT, subscriptions BIGINT)
LANGUAGE sql VOLATILE
AS $$
  WITH qs AS (
    SELECT q.id FROM queen.queues q WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
  ), c AS (
    DELETE FROM queen.log_consumers c USING queen.log_partitions p, qs
     WHERE c.partition_id = p.id AND p.queue_id = qs.id AND c.consumer_group = p_group
    RETURNING 1
  ), s AS (
    DELETE FROM queen.consumer_subscriptions s USING qs
     WHERE s.queue_id = qs.id AND s.consumer_group = p_group
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM s)
$$;
--> statement-breakpoint
-- Per partition: live messages, and those not yet committed by every group that reads it. Lag is
-- last_offset - max(committed, log_start - 1): retention gaps are not lag (SPEC §4).
CREATE OR REPLACE FUNCTION queen.list_queues(p_tenant TEXT, p_namespace TEXT, p_task TEXT) RETURNS JSONB
LANGUAGE sql STABLE
AS $$
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'id', q.id::text, 'name', q.name, 'namespace', q.namespace, 'task', q.task,
           'createdAt', queen.admin_iso(q.created_at), 'partitions', st.partitions,
           'messages', jsonb_build_object('total', st.total, 'pending', st.pending)) ORDER BY q.name), '[]'::jsonb)
    FROM queen.queues q
    CROSS JOIN LATERAL (
      SELECT count(p.id) AS partitions,
             COALESCE(sum(p.last_offset - p.log_start + 1), 0) AS total,
             COALESCE(sum(p.last_offset - GREATEST(c.low, p.log_start - 1)), 0) AS pending
        FROM queen.log_partitions p
        LEFT JOIN LATERAL (
          SELECT min(lc.committed) AS low FROM queen.log_consumers lc WHERE lc.partition_id = p.id
        ) c ON true
       WHERE p.queue_id = q.id
    ) st
   WHERE q.tenant_id = p_tenant
     AND (p_namespace IS NULL OR q.namespace = p_namespace)
     AND (p_task IS NULL OR q.task = p_task)
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION queen.describe_queue(p_tenant TEXT, p_name TEXT) RETURNS JSONB
LANGUAGE sql STABLE
AS $$
  SELECT jsonb_build_object(
           'id', q.id::text, 'name', q.name, 'namespace', q.namespace, 'task', q.task,
           'createdAt', queen.admin_iso(q.created_at), 'updatedAt', queen.admin_iso(q.updated_at),
           'options', queen.queue_options(q),
           'partitions', COALESCE((
             SELECT jsonb_agg(jsonb_build_object(
                      'id', p.id::text, 'name', p.name, 'last_offset', p.last_offset,
                      'log_start', p.log_start, 'txns_start', p.txns_start,
                      'messages', p.last_offset - p.log_start + 1,
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
               FROM queen.log_partitions p WHERE p.queue_id = q.id), '[]'::jsonb))
    FROM queen.queues q
   WHERE q.tenant_id = p_tenant AND q.name = p_name
$$;
--> statement-breakpoint
-- Per (group, queue): the partitions it reads, summed lag and the age of the oldest message it has
-- not consumed (the segment holding its next wanted offset). A partition a subscribed group has
-- no cursor on yet counts from where its first pop would start (SPEC §3.2): the beginning, or
-- the first segment created at or after the subscription's start (last_write_at is quantized
-- and stamped before commit, hence the slack before skipping a partition as untouched since).
CREATE OR REPLACE FUNCTION queen.list_consumer_groups(p_tenant TEXT, p_queue TEXT) RETURNS JSONB
LANGUAGE sql STABLE
AS $$
  WITH subs AS (
    SELECT q.id AS queue_id, q.name AS queue, s.consumer_group, s.mode, s.start_at, s.subscribed_at
      FROM queen.consumer_subscriptions s JOIN queen.queues q ON q.id = s.queue_id
     WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
  ), cur AS (
    SELECT q.id AS queue_id, q.name AS queue, c.consumer_group, p.id AS partition_id, p.last_offset,
           p.log_start, c.committed, c.batch_end IS NOT NULL AND c.lease_expires_at > now() AS leased
      FROM queen.queues q
      JOIN queen.log_partitions p ON p.queue_id = q.id
      JOIN queen.log_consumers c ON c.partition_id = p.id
     WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
    UNION ALL
    SELECT s.queue_id, s.queue, s.consumer_group, p.id, p.last_offset, p.log_start,
           CASE WHEN s.start_at IS NULL THEN -1
                WHEN p.last_write_at < s.start_at - interval '2 minutes' THEN p.last_offset
                ELSE queen.offset_at_time(p.id, s.start_at) - 1 END,
           false
      FROM subs s JOIN queen.log_partitions p ON p.queue_id = s.queue_id
     WHERE NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                        WHERE c.partition_id = p.id AND c.consumer_group = s.consumer_group)
  ), lagged AS (
    SELECT cur.*, cur.last_offset - GREATEST(cur.committed, cur.log_start - 1) AS lag,
           GREATEST(cur.committed + 1, cur.log_start) AS wanted
      FROM cur
  ), per AS (
    SELECT queue_id, queue, consumer_group, count(*) AS partitions, sum(lag) AS lag,
           count(*) FILTER (WHERE leased) AS leased,
           min(queen.segment_time_at(partition_id, wanted)) FILTER (WHERE lag > 0) AS oldest
      FROM lagged GROUP BY queue_id, queue, consumer_group
  )
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'name', COALESCE(per.consumer_group, subs.consumer_group),
           'queue', COALESCE(per.queue, subs.queue),
           'partitions', COALESCE(per.partitions, 0),
           'lag', COALESCE(per.lag, 0),
           'leasedPartitions', COALESCE(per.leased, 0),
           'oldestUnconsumedAgeSeconds',
             CASE WHEN per.oldest IS NULL THEN 0
                  ELSE GREATEST(0, floor(extract(epoch FROM now() - per.oldest)))::bigint END,
           'subscriptionMode', subs.mode,
           'subscribedAt', queen.admin_iso(subs.subscribed_at))
           ORDER BY COALESCE(per.consumer_group, subs.consumer_group), COALESCE(per.queue, subs.queue)), '[]'::jsonb)
    FROM per FULL JOIN subs ON subs.queue_id = per.queue_id AND subs.consumer_group = per.consumer_group
$$;
--> statement-breakpoint
-- Partitions retention has work on: the first live segment is older than a window that applies,
-- or the first sidecar row is older than the purge window. Two primary-key probes per partition.
CREATE OR REPLACE FUNCTION queen.retention_candidates()
RETURNS TABLE (partition_id BIGINT, tenant TEXT, queue TEXT)
LANGUAGE sql STABLE
AS $$
  SELECT p.id, q.tenant_id, q.name
    FROM queen.log_partitions p
    JOIN queen.queues q ON q.id = p.queue_id
   WHERE (((q.retention_enabled AND q.retention_seconds > 0) OR q.completed_retention_seconds > 0)
          AND EXISTS (
            SELECT 1 FROM (
              SELECT s.created_at FROM queen.log_segments s
               WHERE s.partition_id = p.id AND s.base_offset >= p.log_start
               ORDER BY s.base_offset LIMIT 1) f
             WHERE (q.retention_enabled AND q.retention_seconds > 0
                    AND f.created_at < now() - make_interval(secs => q.retention_seconds))
                OR (q.completed_retention_seconds > 0
                    AND f.created_at < now() - make_interval(secs => q.completed_retention_seconds))))
      OR EXISTS (
            SELECT 1 FROM (
              SELECT t.created_at FROM queen.log_txns t
               WHERE t.partition_id = p.id AND t.base_offset >= p.txns_start
               ORDER BY t.base_offset LIMIT 1) f
             WHERE f.created_at < now() - make_interval(secs => GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900)))
   ORDER BY p.id
$$;
--> statement-breakpoint
-- Retention of one partition, in its own short transaction (SPEC §4): deletes the longest prefix of
-- whole segments that time retention or completed retention allows, at most p_max_segments of
-- them (`more` says a further call has work), and purges the sidecar on its own clock. log_start
-- moves to the first surviving segment (seed invariant 3), txns_start likewise; both in one
-- UPDATE at the end, so the partition row (the push serializer) is locked only until commit.
-- Completed retention keeps every segment some subscribed group has not committed past, and the
-- whole partition while a subscribed group has no cursor on it. A concurrent run holding the
-- partition's advisory lock makes this one skip it.
CREATE OR REPLACE FUNCTION queen.retain_partition(p_partition BIGINT, p_max_segments INT DEFAULT 10000)
RETURNS TABLE (queue_id BIGINT, skipped BOOLEAN, segments BIGINT, messages BIGINT, sidecars BIGINT, more BOOLEAN)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  r RECORD;
  time_on BOOLEAN;
  done_on BOOLEAN;
  low BIGINT;
  unread BOOLEAN;
  seg_to BIGINT;
  txn_to BIGINT;
  cap BIGINT;
  capped BOOLEAN := false;
  seg_n BIGINT := 0;
  msg_n BIGINT := 0;
  txn_n BIGINT := 0;
BEGIN
  SELECT p.id, p.queue_id, p.log_start, p.txns_start, p.last_offset, q.retention_enabled,
         q.retention_seconds, q.completed_retention_seconds, q.dedup_window_seconds
    INTO r
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
   WHERE p.id = p_partition;
  IF NOT FOUND THEN RETURN; END IF;
  IF NOT pg_try_advisory_xact_lock(1374027780, (p_partition % 2147483647)::int) THEN
    RETURN QUERY SELECT r.queue_id, true, 0::bigint, 0::bigint, 0::bigint, false;
    RETURN;
  END IF;

  time_on := r.retention_enabled AND r.retention_seconds > 0;
  done_on := r.completed_retention_seconds > 0;
  IF done_on THEN
    SELECT min(c.committed), bool_or(c.committed IS NULL) INTO low, unread
      FROM (SELECT s.consumer_group FROM queen.consumer_subscriptions s WHERE s.queue_id = r.queue_id
            UNION
            SELECT lc.consumer_group FROM queen.log_consumers lc WHERE lc.partition_id = p_partition) g
      LEFT JOIN queen.log_consumers c ON c.partition_id = p_partition AND c.consumer_group = g.consumer_group;
    IF low IS NULL OR unread THEN done_on := false; END IF;
  END IF;

  seg_to := r.log_start;
  IF time_on OR done_on THEN
    SELECT s.base_offset INTO seg_to FROM queen.log_segments s
     WHERE s.partition_id = p_partition AND s.base_offset >= r.log_start
       AND NOT ((time_on AND s.created_at < now() - make_interval(secs => r.retention_seconds))
             OR (done_on AND s.end_offset <= low
                 AND s.created_at < now() - make_interval(secs => r.completed_retention_seconds)))
     ORDER BY s.base_offset LIMIT 1;
    seg_to := COALESCE(seg_to, r.last_offset + 1);
    SELECT s.base_offset INTO cap FROM queen.log_segments s
     WHERE s.partition_id = p_partition AND s.base_offset >= r.log_start
     ORDER BY s.base_offset OFFSET p_max_segments LIMIT 1;
    IF cap < seg_to THEN
      seg_to := cap;
      capped := true;
    END IF;
    IF seg_to > r.log_start THEN
      WITH d AS (
        DELETE FROM queen.log_segments s WHERE s.partition_id = p_partition AND s.base_offset < seg_to
        RETURNING s.end_offset - s.base_offset + 1 AS n)
      SELECT count(*), COALESCE(sum(d.n), 0) INTO seg_n, msg_n FROM d;
    END IF;
  END IF;

  SELECT t.base_offset INTO txn_to FROM queen.log_txns t
   WHERE t.partition_id = p_partition AND t.base_offset >= r.txns_start
     AND t.created_at >= now() - make_interval(secs => GREATEST(r.dedup_window_seconds, r.completed_retention_seconds, 900))
   ORDER BY t.base_offset LIMIT 1;
  txn_to := COALESCE(txn_to, r.last_offset + 1);
  cap := NULL;
  SELECT t.base_offset INTO cap FROM queen.log_txns t
   WHERE t.partition_id = p_partition AND t.base_offset >= r.txns_start
   ORDER BY t.base_offset OFFSET p_max_segments LIMIT 1;
  IF cap < txn_to THEN
    txn_to := cap;
    capped := true;
  END IF;
  IF txn_to > r.txns_start THEN
    WITH d AS (DELETE FROM queen.log_txns t WHERE t.partition_id = p_partition AND t.base_offset < txn_to RETURNING 1)
    SELECT count(*) INTO txn_n FROM d;
  END IF;

  IF seg_to > r.log_start OR txn_to > r.txns_start THEN
    UPDATE queen.log_partitions p
       SET log_start = GREATEST(p.log_start, seg_to), txns_start = GREATEST(p.txns_start, txn_to)
     WHERE p.id = p_partition;
  END IF;

  RETURN QUERY SELECT r.queue_id, false, seg_n, msg_n, txn_n, capped;
END
$$;
