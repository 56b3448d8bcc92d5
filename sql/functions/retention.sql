-- Retention (SPEC §4) and the per-minute rollup it runs first.

-- Partitions retention has work on: the first live segment is older than a window that applies,
-- or the first sidecar row is older than the purge window. Two primary-key probes per partition.
-- A partition whose first live segment is older than maxWaitTimeSeconds has work too.
CREATE OR REPLACE FUNCTION queen.retention_candidates()
 RETURNS TABLE(partition_id bigint, tenant text, queue text)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT p.id, q.tenant_id, q.name
    FROM queen.log_partitions p
    JOIN queen.queues q ON q.id = p.queue_id
   WHERE (((q.retention_enabled AND q.retention_seconds > 0) OR q.completed_retention_seconds > 0
           OR q.max_wait_time_seconds > 0)
          AND EXISTS (
            SELECT 1 FROM (
              SELECT s.created_at FROM queen.log_segments s
               WHERE s.partition_id = p.id AND s.base_offset >= p.log_start
               ORDER BY s.base_offset LIMIT 1) f
             WHERE (q.retention_enabled AND q.retention_seconds > 0
                    AND f.created_at < now() - make_interval(secs => q.retention_seconds))
                OR (q.completed_retention_seconds > 0
                    AND f.created_at < now() - make_interval(secs => q.completed_retention_seconds))
                OR (q.max_wait_time_seconds > 0
                    AND f.created_at < now() - make_interval(secs => q.max_wait_time_seconds))))
      OR EXISTS (
            SELECT 1 FROM (
              SELECT t.created_at FROM queen.log_txns t
               WHERE t.partition_id = p.id AND t.base_offset >= p.txns_start
               ORDER BY t.base_offset LIMIT 1) f
             WHERE f.created_at < now() - make_interval(secs => GREATEST(q.dedup_window_seconds, q.completed_retention_seconds, 900)))
   ORDER BY p.id
$function$;

-- Retention of one partition, in its own short transaction (SPEC §4): deletes the longest prefix of
-- whole segments that time retention or completed retention allows, at most p_max_segments of
-- them (`more` says a further call has work), and purges the sidecar on its own clock. log_start
-- moves to the first surviving segment (seed invariant 3), txns_start likewise; both in one
-- UPDATE at the end, so the partition row (the push serializer) is locked only until commit.
-- Completed retention keeps every segment some subscribed group has not committed past, and the
-- whole partition while a subscribed group has no cursor on it. A concurrent run holding the
-- partition's advisory lock makes this one skip it.
-- Queen's maxWaitTimeSeconds evicts what waited longer than that, consumed or not: here the prefix of
-- segments older than it goes. A segment counts for time retention when that rule allows it, else
-- for completed retention when every subscribed group is past it, else for eviction.
CREATE OR REPLACE FUNCTION queen.retain_partition(p_partition bigint, p_max_segments integer DEFAULT 10000)
 RETURNS TABLE(queue_id bigint, skipped boolean, segments bigint, messages bigint, time_messages bigint, completed_messages bigint, eviction_messages bigint, sidecars bigint, more boolean)
 LANGUAGE plpgsql
AS $function$
DECLARE
  r RECORD;
  time_on BOOLEAN;
  done_on BOOLEAN;
  evict_on BOOLEAN;
  low BIGINT;
  unread BOOLEAN;
  seg_to BIGINT;
  txn_to BIGINT;
  cap BIGINT;
  capped BOOLEAN := false;
  seg_n BIGINT := 0;
  msg_n BIGINT := 0;
  time_n BIGINT := 0;
  done_n BIGINT := 0;
  txn_n BIGINT := 0;
BEGIN
  SELECT p.id, p.queue_id, p.log_start, p.txns_start, p.last_offset, q.retention_enabled,
         q.retention_seconds, q.completed_retention_seconds, q.dedup_window_seconds, q.max_wait_time_seconds
    INTO r
    FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
   WHERE p.id = p_partition;
  IF NOT FOUND THEN RETURN; END IF;
  IF NOT pg_try_advisory_xact_lock(1374027780, (p_partition % 2147483647)::int) THEN
    RETURN QUERY SELECT r.queue_id, true, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint, false;
    RETURN;
  END IF;

  time_on := r.retention_enabled AND r.retention_seconds > 0;
  done_on := r.completed_retention_seconds > 0;
  evict_on := r.max_wait_time_seconds > 0;
  IF done_on THEN
    SELECT min(c.committed), bool_or(c.committed IS NULL) INTO low, unread
      FROM (SELECT s.consumer_group FROM queen.consumer_subscriptions s WHERE s.queue_id = r.queue_id
            UNION
            SELECT lc.consumer_group FROM queen.log_consumers lc WHERE lc.partition_id = p_partition) g
      LEFT JOIN queen.log_consumers c ON c.partition_id = p_partition AND c.consumer_group = g.consumer_group;
    IF low IS NULL OR unread THEN done_on := false; END IF;
  END IF;

  seg_to := r.log_start;
  IF time_on OR done_on OR evict_on THEN
    SELECT s.base_offset INTO seg_to FROM queen.log_segments s
     WHERE s.partition_id = p_partition AND s.base_offset >= r.log_start
       AND NOT ((time_on AND s.created_at < now() - make_interval(secs => r.retention_seconds))
             OR (done_on AND s.end_offset <= low
                 AND s.created_at < now() - make_interval(secs => r.completed_retention_seconds))
             OR (evict_on AND s.created_at < now() - make_interval(secs => r.max_wait_time_seconds)))
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
        RETURNING s.end_offset - s.base_offset + 1 AS n,
                  time_on AND s.created_at < now() - make_interval(secs => r.retention_seconds) AS by_time,
                  done_on AND s.end_offset <= low
                    AND s.created_at < now() - make_interval(secs => r.completed_retention_seconds) AS by_done)
      SELECT count(*), COALESCE(sum(d.n), 0), COALESCE(sum(d.n) FILTER (WHERE d.by_time), 0),
             COALESCE(sum(d.n) FILTER (WHERE d.by_done AND NOT d.by_time), 0)
        INTO seg_n, msg_n, time_n, done_n FROM d;
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

  RETURN QUERY SELECT r.queue_id, false, seg_n, msg_n, time_n, done_n, msg_n - time_n - done_n, txn_n, capped;
END
$function$;

-- What one retention run deleted per queue, by rule, added to the current minute (S4).
CREATE OR REPLACE FUNCTION queen.record_retention(p_queues bigint[], p_time bigint[], p_completed bigint[], p_eviction bigint[], p_partitions integer[])
 RETURNS void
 LANGUAGE sql
AS $function$
  INSERT INTO queen.queue_minute_stats AS m (queue_id, bucket, retention_messages, completed_retention_messages,
                                             eviction_messages, retention_events)
  SELECT r.queue_id, date_trunc('minute', now()), r.t, r.c, r.e, r.n
    FROM unnest(p_queues, p_time, p_completed, p_eviction, p_partitions) AS r(queue_id, t, c, e, n)
    JOIN queen.queues q ON q.id = r.queue_id
  ON CONFLICT (queue_id, bucket) DO UPDATE SET
    retention_messages = m.retention_messages + EXCLUDED.retention_messages,
    completed_retention_messages = m.completed_retention_messages + EXCLUDED.completed_retention_messages,
    eviction_messages = m.eviction_messages + EXCLUDED.eviction_messages,
    retention_events = m.retention_events + EXCLUDED.retention_events
$function$;

-- The per-minute rollup (run by the retention cron, before retention deletes what it counts).
-- Closed minutes since the last run (plus three, for pushes that committed late) are recomputed
-- from the log: pushes from segment created_at (monotone in base_offset, seed invariant 2, so one
-- range scan per recently written partition), partitions from created_at, dead letters from
-- failed_at. GREATEST keeps a count that retention, a DLQ retry or delete lowered since. Then
-- each queue's gauges are sampled into the current minute when they changed (or every six hours
-- while it has partitions), and rows older than p_keep go. Overlapping runs skip, and so does a run
-- that races a queue's deletion.
CREATE OR REPLACE FUNCTION queen.rollup_minute_stats(p_keep interval DEFAULT '7 days'::interval)
 RETURNS TABLE(skipped boolean, from_minute timestamp with time zone, to_minute timestamp with time zone, samples integer, removed integer)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
  st queen.minute_stats_state;
  t_now TIMESTAMPTZ := now();
  t_to TIMESTAMPTZ := date_trunc('minute', now());
  t_from TIMESTAMPTZ;
  n_samples INT;
  n_removed INT;
BEGIN
  IF NOT pg_try_advisory_xact_lock(1374027781) THEN
    RETURN QUERY SELECT true, NULL::timestamptz, NULL::timestamptz, 0, 0;
    RETURN;
  END IF;
  SELECT * INTO st FROM queen.minute_stats_state s WHERE s.id;
  t_from := GREATEST(COALESCE(st.rolled_to, t_to) - interval '3 minutes', COALESCE(st.started_at, t_to), t_to - p_keep);

  INSERT INTO queen.queue_minute_stats AS m (queue_id, bucket, pushed_messages, pushed_segments, pushed_bytes)
  SELECT p.queue_id, seg.minute, sum(seg.messages), sum(seg.segments), sum(seg.bytes)
    FROM queen.log_partitions p
    CROSS JOIN LATERAL (SELECT queen.offset_at_time(p.id, t_from) AS first_offset) o
    CROSS JOIN LATERAL (
      SELECT date_trunc('minute', s.created_at) AS minute, sum(s.end_offset - s.base_offset + 1) AS messages,
             count(*) AS segments, sum(octet_length(s.blob)) AS bytes
        FROM queen.log_segments s
       WHERE s.partition_id = p.id AND s.base_offset >= o.first_offset AND s.created_at < t_to
       GROUP BY 1) seg
   WHERE p.last_write_at >= t_from - interval '2 minutes'
   GROUP BY p.queue_id, seg.minute
  ON CONFLICT (queue_id, bucket) DO UPDATE SET
    pushed_messages = GREATEST(m.pushed_messages, EXCLUDED.pushed_messages),
    pushed_segments = GREATEST(m.pushed_segments, EXCLUDED.pushed_segments),
    pushed_bytes = GREATEST(m.pushed_bytes, EXCLUDED.pushed_bytes);

  INSERT INTO queen.queue_minute_stats AS m (queue_id, bucket, partitions_created)
  SELECT p.queue_id, date_trunc('minute', p.created_at), count(*)
    FROM queen.log_partitions p
   WHERE p.created_at >= t_from AND p.created_at < t_to
   GROUP BY 1, 2
  ON CONFLICT (queue_id, bucket) DO UPDATE SET
    partitions_created = GREATEST(m.partitions_created, EXCLUDED.partitions_created);

  INSERT INTO queen.queue_minute_stats AS m (queue_id, bucket, dlq_added)
  SELECT p.queue_id, date_trunc('minute', d.failed_at), count(*)
    FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id
   WHERE d.failed_at >= t_from AND d.failed_at < t_to
   GROUP BY 1, 2
  ON CONFLICT (queue_id, bucket) DO UPDATE SET dlq_added = GREATEST(m.dlq_added, EXCLUDED.dlq_added);

  WITH fig AS (
    SELECT f.*, q.created_at AS queue_created
      FROM queen.queue_figures(ARRAY(SELECT q.id FROM queen.queues q)) f
      JOIN queen.queues q ON q.id = f.queue_id
  ), cand AS (
    SELECT f.*, last.sampled_at AS last_at,
           (f.partitions::int, f.held, f.lag_messages, f.processing, f.lagging_pairs::int, f.oldest_unconsumed_at,
            f.mean_unconsumed_at, f.total_consumed)
             IS DISTINCT FROM
           (last.partitions, last.held, last.lag_messages, last.in_flight, last.lagging_pairs, last.oldest_unconsumed_at,
            last.mean_unconsumed_at, last.consumed_total) AS changed,
           CASE WHEN earlier.consumed_total IS NOT NULL THEN GREATEST(f.total_consumed - earlier.consumed_total, 0)
                WHEN f.queue_created >= st.started_at THEN f.total_consumed END AS consumed
      FROM fig f
      LEFT JOIN LATERAL (
        SELECT m.* FROM queen.queue_minute_stats m
         WHERE m.queue_id = f.queue_id AND m.sampled_at IS NOT NULL ORDER BY m.bucket DESC LIMIT 1) last ON true
      LEFT JOIN LATERAL (
        SELECT m.consumed_total FROM queen.queue_minute_stats m
         WHERE m.queue_id = f.queue_id AND m.sampled_at IS NOT NULL AND m.bucket < t_to
         ORDER BY m.bucket DESC LIMIT 1) earlier ON true
  ), written AS (
    INSERT INTO queen.queue_minute_stats AS m (
      queue_id, bucket, sampled_at, partitions, held, lag_messages, in_flight, lagging_pairs,
      oldest_unconsumed_at, mean_unconsumed_at, consumed_total, consumed)
    SELECT n.queue_id, t_to, t_now, n.partitions, n.held, n.lag_messages, n.processing, n.lagging_pairs,
           n.oldest_unconsumed_at, n.mean_unconsumed_at, n.total_consumed, n.consumed
      FROM cand n
     WHERE n.changed OR (n.partitions > 0 AND n.last_at < t_now - interval '6 hours')
    ON CONFLICT (queue_id, bucket) DO UPDATE SET
      sampled_at = EXCLUDED.sampled_at, partitions = EXCLUDED.partitions, held = EXCLUDED.held,
      lag_messages = EXCLUDED.lag_messages, in_flight = EXCLUDED.in_flight, lagging_pairs = EXCLUDED.lagging_pairs,
      oldest_unconsumed_at = EXCLUDED.oldest_unconsumed_at, mean_unconsumed_at = EXCLUDED.mean_unconsumed_at,
      consumed_total = EXCLUDED.consumed_total, consumed = EXCLUDED.consumed
    RETURNING 1
  )
  SELECT count(*) INTO n_samples FROM written;

  WITH gone AS (DELETE FROM queen.queue_minute_stats m WHERE m.bucket < t_now - p_keep RETURNING 1)
  SELECT count(*) INTO n_removed FROM gone;

  INSERT INTO queen.minute_stats_state AS s (id, started_at, rolled_to, sampled_at)
  VALUES (true, t_to, t_to, t_now)
  ON CONFLICT (id) DO UPDATE SET rolled_to = EXCLUDED.rolled_to, sampled_at = EXCLUDED.sampled_at;

  RETURN QUERY SELECT false, t_from, t_to, n_samples, n_removed;
EXCEPTION WHEN foreign_key_violation THEN
  -- A queue was deleted while this run counted it: the next run recomputes the same minutes.
  RETURN QUERY SELECT true, NULL::timestamptz, NULL::timestamptz, 0, 0;
END
$function$;
