-- Time series from the per-minute rollup for the dashboard's status and analytics routes.

-- A bucket's key on the wire: UTC, no fraction, the same format in every row.
CREATE OR REPLACE FUNCTION queen.bucket_key(p_t timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT to_char(p_t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $function$;

-- Bucket width from the window, as Queen chooses it: up to 1 h 1 min, 6 h 5 min, 24 h 15 min, 7 d 60 min, else 6 h.
CREATE OR REPLACE FUNCTION queen.bucket_minutes(p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE WHEN p_to - p_from <= interval '60 minutes' THEN 1
              WHEN p_to - p_from <= interval '6 hours' THEN 5
              WHEN p_to - p_from <= interval '24 hours' THEN 15
              WHEN p_to - p_from <= interval '7 days' THEN 60
              ELSE 360 END
$function$;

-- Buckets are multiples of their width since the epoch: aligned to the hour, 6-hour ones to midnight UTC.
CREATE OR REPLACE FUNCTION queen.bucket_start(p_t timestamp with time zone, p_width integer)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
AS $function$ SELECT to_timestamp(floor(extract(epoch FROM p_t) / (p_width * 60)) * (p_width * 60)) $function$;

-- The buckets of a window that the rollup has covered: from its first run to the last closed minute
-- it recomputed; later ones are not known yet. asof is the instant a bucket's gauges are read at:
-- its end, or the last sample when that is earlier.
CREATE OR REPLACE FUNCTION queen.stats_buckets(p_from timestamp with time zone, p_to timestamp with time zone, p_width integer)
 RETURNS TABLE(bucket timestamp with time zone, bucket_end timestamp with time zone, asof timestamp with time zone)
 LANGUAGE sql
 STABLE ROWS 100
AS $function$
  SELECT b, b + make_interval(mins => p_width), LEAST(b + make_interval(mins => p_width), st.sampled_at)
    FROM queen.minute_stats_state st
    CROSS JOIN generate_series(queen.bucket_start(GREATEST(p_from, st.started_at), p_width),
                               LEAST(p_to, st.rolled_to) - interval '1 microsecond', make_interval(mins => p_width)) b
   WHERE st.id
$function$;

-- The ids of the tenant's queues a status or analytics filter selects, in id order.
CREATE OR REPLACE FUNCTION queen.tenant_queue_ids(p_tenant text, p_queue text, p_namespace text, p_task text)
 RETURNS bigint[]
 LANGUAGE sql
 STABLE
AS $function$
  SELECT COALESCE(array_agg(q.id ORDER BY q.id), '{}')
    FROM queen.queues q
   WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
     AND (p_namespace IS NULL OR q.namespace = p_namespace) AND (p_task IS NULL OR q.task = p_task)
$function$;

-- A queue's gauges at instant p_t, from its last sample at or before it: samples are written when
-- something changed, so until the next one the oldest unconsumed message is the same and the lag
-- is p_t minus its time. NULL before the queue's first sample.
CREATE OR REPLACE FUNCTION queen.lag_at(p_queue bigint, p_t timestamp with time zone)
 RETURNS TABLE(partitions integer, lagging_pairs integer, max_lag_ms bigint, mean_lag_ms bigint)
 LANGUAGE sql
 STABLE ROWS 1
AS $function$
  SELECT m.partitions, m.lagging_pairs,
         CASE WHEN m.lagging_pairs > 0 THEN floor(extract(epoch FROM p_t - m.oldest_unconsumed_at) * 1000)::bigint ELSE 0 END,
         CASE WHEN m.lagging_pairs > 0 THEN floor(extract(epoch FROM p_t - m.mean_unconsumed_at) * 1000)::bigint ELSE 0 END
    FROM queen.queue_minute_stats m
   WHERE m.queue_id = p_queue AND m.sampled_at IS NOT NULL AND m.bucket <= p_t AND m.sampled_at <= p_t
   ORDER BY m.bucket DESC
   LIMIT 1
$function$;

-- The queues that had lag at some point of [p_from, p_to): the others need no lag lookups.
CREATE OR REPLACE FUNCTION queen.lagging_queues(p_queues bigint[], p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS bigint[]
 LANGUAGE sql
 STABLE
AS $function$
  SELECT COALESCE(array_agg(q.id), '{}')
    FROM unnest(p_queues) q(id)
   WHERE EXISTS (SELECT 1 FROM queen.queue_minute_stats m
                  WHERE m.queue_id = q.id AND m.bucket >= p_from AND m.bucket < p_to AND m.lagging_pairs > 0)
      OR (SELECT m.lagging_pairs FROM queen.queue_minute_stats m
           WHERE m.queue_id = q.id AND m.sampled_at IS NOT NULL AND m.bucket < p_from
           ORDER BY m.bucket DESC LIMIT 1) > 0
$function$;

-- Per queue and covered bucket, only where something happened or the queue lagged: pushes,
-- consumption, new partitions, and the partitions and lag at the bucket's end.
CREATE OR REPLACE FUNCTION queen.queue_series(p_queues bigint[], p_from timestamp with time zone, p_to timestamp with time zone, p_width integer)
 RETURNS TABLE(queue_id bigint, bucket timestamp with time zone, pushed bigint, consumed bigint, partitions_created bigint, partitions integer, avg_lag_ms bigint, max_lag_ms bigint)
 LANGUAGE sql
 STABLE
AS $function$
  WITH b AS (SELECT * FROM queen.stats_buckets(p_from, p_to, p_width)),
  span AS (SELECT min(b.bucket) AS lo, max(b.bucket_end) AS hi FROM b),
  sums AS (
    SELECT m.queue_id, queen.bucket_start(m.bucket, p_width) AS bucket, sum(m.pushed_messages) AS pushed,
           sum(COALESCE(m.consumed, 0)) AS consumed, sum(m.partitions_created) AS created
      FROM span JOIN queen.queue_minute_stats m ON m.bucket >= span.lo AND m.bucket < span.hi
     WHERE m.queue_id = ANY (p_queues)
     GROUP BY 1, 2
    HAVING sum(m.pushed_messages) > 0 OR sum(COALESCE(m.consumed, 0)) > 0 OR sum(m.partitions_created) > 0
        OR bool_or(m.sampled_at IS NOT NULL)
  ), keys AS (
    SELECT s.queue_id, s.bucket FROM sums s
    UNION
    SELECT q.id, b.bucket FROM span CROSS JOIN unnest(queen.lagging_queues(p_queues, span.lo, span.hi)) q(id) CROSS JOIN b
  )
  SELECT k.queue_id, k.bucket, COALESCE(s.pushed, 0)::bigint, COALESCE(s.consumed, 0)::bigint, COALESCE(s.created, 0)::bigint,
         l.partitions, l.mean_lag_ms, l.max_lag_ms
    FROM keys k
    JOIN b ON b.bucket = k.bucket
    LEFT JOIN sums s ON s.queue_id = k.queue_id AND s.bucket = k.bucket
    LEFT JOIN LATERAL queen.lag_at(k.queue_id, b.asof) l ON true
   WHERE s.queue_id IS NOT NULL OR l.lagging_pairs > 0
$function$;

-- What retention deleted per bucket and rule, only buckets with deletions; retention writes into
-- the current minute, so the window runs to p_to.
CREATE OR REPLACE FUNCTION queen.retention_series(p_queues bigint[], p_from timestamp with time zone, p_to timestamp with time zone, p_width integer)
 RETURNS TABLE(bucket timestamp with time zone, by_time bigint, by_completed bigint, by_eviction bigint, events bigint)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT queen.bucket_start(m.bucket, p_width), sum(m.retention_messages)::bigint, sum(m.completed_retention_messages)::bigint,
         sum(m.eviction_messages)::bigint, sum(m.retention_events)::bigint
    FROM queen.minute_stats_state st
    JOIN queen.queue_minute_stats m ON m.bucket >= queen.bucket_start(GREATEST(p_from, st.started_at), p_width) AND m.bucket < p_to
   WHERE st.id AND m.queue_id = ANY (p_queues) AND m.retention_events > 0
   GROUP BY 1
$function$;

-- Every covered bucket of the window for a set of queues together: pushes, segments, consumption,
-- dead letters, and the lag across their lagging (partition, group) positions at the bucket's end
-- (mean weighted by positions, and max). Zero where nothing happened.
CREATE OR REPLACE FUNCTION queen.tenant_series(p_queues bigint[], p_from timestamp with time zone, p_to timestamp with time zone, p_width integer)
 RETURNS TABLE(bucket timestamp with time zone, pushed bigint, segments bigint, consumed bigint, dlq bigint, avg_lag_ms bigint, max_lag_ms bigint)
 LANGUAGE sql
 STABLE
AS $function$
  WITH b AS (SELECT * FROM queen.stats_buckets(p_from, p_to, p_width)),
  span AS (SELECT min(b.bucket) AS lo, max(b.bucket_end) AS hi FROM b),
  sums AS (
    SELECT queen.bucket_start(m.bucket, p_width) AS bucket, sum(m.pushed_messages) AS pushed,
           sum(m.pushed_segments) AS segments, sum(m.consumed) AS consumed, sum(m.dlq_added) AS dlq
      FROM span JOIN queen.queue_minute_stats m ON m.bucket >= span.lo AND m.bucket < span.hi
     WHERE m.queue_id = ANY (p_queues)
     GROUP BY 1
  ), lags AS (
    SELECT b.bucket, sum(l.lagging_pairs * l.mean_lag_ms) / NULLIF(sum(l.lagging_pairs), 0) AS avg_ms,
           max(l.max_lag_ms) AS max_ms
      FROM span
      CROSS JOIN unnest(queen.lagging_queues(p_queues, span.lo, span.hi)) q(id)
      CROSS JOIN b
      CROSS JOIN LATERAL queen.lag_at(q.id, b.asof) l
     GROUP BY b.bucket
  )
  SELECT b.bucket, COALESCE(s.pushed, 0)::bigint, COALESCE(s.segments, 0)::bigint, COALESCE(s.consumed, 0)::bigint,
         COALESCE(s.dlq, 0)::bigint, COALESCE(l.avg_ms, 0)::bigint, COALESCE(l.max_ms, 0)::bigint
    FROM b
    LEFT JOIN sums s ON s.bucket = b.bucket
    LEFT JOIN lags l ON l.bucket = b.bucket
$function$;
