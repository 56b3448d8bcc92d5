-- Consumer groups: the cursors' triggers, seek, delete, and the groups in Queen's shapes (SPEC §3.7,
-- §3.8b): the list, lagging partitions, one group's detail, the subscription update.

-- Cursor rows created by other paths (seek) get their queue_id here; a cursor moved backwards has
-- something to deliver again. Both fire rarely: inserts are once per (partition, group), and the
-- WHEN clause is evaluated without entering plpgsql.
CREATE OR REPLACE FUNCTION queen.log_consumers_fill_queue()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  NEW.queue_id := (SELECT p.queue_id FROM queen.log_partitions p WHERE p.id = NEW.partition_id);
  RETURN NEW;
END
$function$;

-- A cursor moved backwards (seek, DLQ retry) has something to deliver again: the wildcard scan
-- finds it by its pending flag.
CREATE OR REPLACE FUNCTION queen.log_consumers_rewound()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  NEW.pending := true;
  RETURN NEW;
END
$function$;

-- The first offset whose segment was created at or after p_ts, or last_offset + 1. created_at is
-- monotone in base_offset (seed invariant 2), so "created_at of the first segment at or after x"
-- is monotone in x and a binary search of forward steps on the primary key finds it.
CREATE OR REPLACE FUNCTION queen.offset_at_time(p_partition bigint, p_ts timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
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
$function$;

-- Creation time of the segment holding offset p_offset (or the nearest one before it): one
-- backward step on the primary key.
CREATE OR REPLACE FUNCTION queen.segment_time_at(p_partition bigint, p_offset bigint)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
AS $function$
  SELECT s.created_at FROM queen.log_segments s
   WHERE s.partition_id = p_partition AND s.base_offset <= p_offset
   ORDER BY s.base_offset DESC LIMIT 1
$function$;

-- Moves one group's cursors on a queue (SPEC §3.7): to the end, to a timestamp, or to an offset of
-- one partition. Creates missing cursor rows, clears leases and resets retry/attempt counters.
-- Returns NULL when the queue does not exist, '[]' when the named partition does not.
CREATE OR REPLACE FUNCTION queen.seek_consumer_group(p_tenant text, p_queue text, p_group text, p_to_end boolean, p_ts timestamp with time zone, p_partition text, p_offset bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
    SELECT t.id, p_group, t.committed FROM target t ORDER BY t.id
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
$function$;

-- Removes a group's cursors on one queue or, with p_queue NULL, on every queue of the tenant, and
-- its subscriptions unless p_metadata is false. A kept subscription starts over from its start
-- point, so its scan mark goes back there too (else the wildcard pop would skip old partitions
-- that now have no cursor). Returns how many cursor and subscription rows went.
CREATE OR REPLACE FUNCTION queen.delete_consumer_group(p_tenant text, p_group text, p_queue text, p_metadata boolean)
 RETURNS TABLE(cursors bigint, subscriptions bigint)
 LANGUAGE sql
AS $function$
  WITH qs AS (
    SELECT q.id FROM queen.queues q WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
  ), c AS (
    DELETE FROM queen.log_consumers c
     WHERE (c.partition_id, c.consumer_group) IN (
       SELECT x.partition_id, x.consumer_group FROM queen.log_consumers x
         JOIN queen.log_partitions p ON p.id = x.partition_id JOIN qs ON qs.id = p.queue_id
        WHERE x.consumer_group = p_group
        ORDER BY x.partition_id
          FOR UPDATE OF x)
    RETURNING 1
  ), s AS (
    DELETE FROM queen.consumer_subscriptions s USING qs
     WHERE p_metadata AND s.queue_id = qs.id AND s.consumer_group = p_group
    RETURNING 1
  ), kept AS (
    -- Runs although nothing reads it: PostgreSQL completes every data-modifying WITH.
    UPDATE queen.consumer_subscriptions s SET scanned_at = s.start_at FROM qs
     WHERE NOT p_metadata AND s.queue_id = qs.id AND s.consumer_group = p_group
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM s)
$function$;

-- POST /consumer-groups/:group/subscription: every subscription of the group in the tenant starts
-- at p_ts from now on (existing cursors stay). The wildcard pop considers partitions written
-- since the scan mark (minus slack) plus flagged cursors, so the mark is lowered to p_ts: a
-- partition without a cursor that holds messages from p_ts on was written since. NULL (never
-- scanned: every partition is a candidate) stays NULL.
CREATE OR REPLACE FUNCTION queen.update_subscription(p_tenant text, p_group text, p_ts timestamp with time zone)
 RETURNS bigint
 LANGUAGE sql
AS $function$
  WITH u AS (
    UPDATE queen.consumer_subscriptions s
       SET mode = 'from', start_at = p_ts,
           scanned_at = CASE WHEN s.scanned_at IS NULL THEN NULL ELSE LEAST(s.scanned_at, p_ts) END
      FROM queen.queues q
     WHERE q.id = s.queue_id AND q.tenant_id = p_tenant AND s.consumer_group = p_group
    RETURNING 1)
  SELECT count(*) FROM u
$function$;

-- GET /consumer-groups: Queen's get_consumer_groups_v4 keys, one element per (group, queue), with
-- true figures (totalLag summed, maxTimeLag the oldest unconsumed message's age), plus ours.
-- state: Lagging past 5 minutes of backlog, else Stable once the group has consumed anything.
CREATE OR REPLACE FUNCTION queen.list_consumer_groups(p_tenant text, p_queue text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  WITH per AS (
    SELECT g.queue_id, g.queue, g.consumer_group, count(*) AS partitions, sum(g.lag) AS lag,
           count(*) FILTER (WHERE g.lag > 0) AS lagging, count(*) FILTER (WHERE g.leased) AS leased,
           max(g.age) AS age, bool_or(g.total_consumed > 0) AS consumed
      FROM queen.group_partitions(p_tenant, p_queue, NULL) g
     GROUP BY g.queue_id, g.queue, g.consumer_group
  ), subs AS (
    SELECT q.id AS queue_id, q.name AS queue, s.consumer_group, s.mode, s.start_at, s.subscribed_at
      FROM queen.consumer_subscriptions s JOIN queen.queues q ON q.id = s.queue_id
     WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
  ), r AS (
    SELECT COALESCE(per.consumer_group, subs.consumer_group) AS name, COALESCE(per.queue, subs.queue) AS queue,
           COALESCE(per.partitions, 0) AS partitions, COALESCE(per.lag, 0) AS lag,
           COALESCE(per.lagging, 0) AS lagging, COALESCE(per.leased, 0) AS leased, COALESCE(per.age, 0) AS age,
           COALESCE(per.consumed, false) AS consumed, subs.mode, subs.start_at, subs.subscribed_at
      FROM per FULL JOIN subs ON subs.queue_id = per.queue_id AND subs.consumer_group = per.consumer_group
  )
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'name', r.name, 'topics', jsonb_build_array(r.queue), 'queueName', r.queue,
           'members', r.partitions, 'partitionsWithLag', r.lagging, 'totalLag', r.lag, 'maxTimeLag', r.age,
           'state', CASE WHEN r.age > 300 THEN 'Lagging' WHEN r.consumed THEN 'Stable' ELSE 'Dead' END,
           'subscriptionMode', CASE r.mode WHEN 'from' THEN 'timestamp' ELSE r.mode END,
           'subscriptionTimestamp', queen.admin_iso(r.start_at),
           'subscriptionCreatedAt', queen.admin_iso(r.subscribed_at),
           'queue', r.queue, 'partitions', r.partitions, 'lag', r.lag, 'leasedPartitions', r.leased,
           'oldestUnconsumedAgeSeconds', r.age, 'subscribedAt', queen.admin_iso(r.subscribed_at))
         ORDER BY r.name, r.queue), '[]'::jsonb)
    FROM r
$function$;

-- GET /consumer-groups/:group: Queen's object keyed by queue name; {} for an unknown group.
CREATE OR REPLACE FUNCTION queen.consumer_group_detail(p_tenant text, p_group text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT COALESCE(jsonb_object_agg(per.queue, jsonb_build_object('partitions', per.partitions)), '{}'::jsonb)
    FROM (SELECT g.queue, jsonb_agg(jsonb_build_object(
                   'partition', g.partition, 'partitionId', g.partition_id::text, 'workerId', g.worker_id,
                   'lastConsumedAt', NULL, 'totalConsumed', g.total_consumed, 'offsetLag', g.lag,
                   'timeLagSeconds', g.age, 'leaseActive', g.leased,
                   'leaseExpiresAt', queen.admin_iso(g.lease_expires_at), 'committed', g.committed)
                 ORDER BY g.partition) AS partitions
            FROM queen.group_partitions(p_tenant, NULL, p_group) g
           GROUP BY g.queue) per
$function$;

-- One row per (group, partition) of the tenant's queues. Lag is last_offset - max(committed,
-- log_start - 1) (SPEC §4); oldest is the creation time of the segment holding the next wanted
-- offset, age its age in whole seconds (0 when caught up).
CREATE OR REPLACE FUNCTION queen.group_partitions(p_tenant text, p_queue text, p_group text)
 RETURNS TABLE(queue_id bigint, queue text, consumer_group text, partition_id bigint, partition text, committed bigint, lag bigint, oldest timestamp with time zone, age bigint, leased boolean, worker_id text, lease_expires_at timestamp with time zone, total_consumed bigint)
 LANGUAGE sql
 STABLE
AS $function$
  WITH lagged AS (
    SELECT q.id AS queue_id, q.name AS queue, g.consumer_group, p.id AS partition_id, p.name AS partition,
           g.committed, p.last_offset - GREATEST(g.committed, p.log_start - 1) AS lag,
           CASE WHEN p.last_offset > GREATEST(g.committed, p.log_start - 1)
                THEN queen.segment_time_at(p.id, GREATEST(g.committed + 1, p.log_start)) END AS oldest,
           g.lease_end IS NOT NULL AS leased, g.worker_id, g.lease_expires_at, g.total_consumed
      FROM queen.queues q
      JOIN queen.log_partitions p ON p.queue_id = q.id
      CROSS JOIN LATERAL queen.partition_groups(p.id) g
     WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
       AND (p_group IS NULL OR g.consumer_group = p_group)
  )
  SELECT l.queue_id, l.queue, l.consumer_group, l.partition_id, l.partition, l.committed, l.lag, l.oldest,
         CASE WHEN l.oldest IS NULL THEN 0 ELSE GREATEST(0, floor(extract(epoch FROM now() - l.oldest)))::bigint END,
         l.leased, l.worker_id, l.lease_expires_at, l.total_consumed
    FROM lagged l
$function$;

-- Every group reading one partition: its cursor, or, for a group subscribed to the queue with no
-- cursor there yet, where its first pop would start (last_write_at is quantized and stamped before
-- commit, hence the slack before treating the partition as untouched since the start). Lease
-- columns only while the lease is live.
CREATE OR REPLACE FUNCTION queen.partition_groups(p_partition bigint)
 RETURNS TABLE(consumer_group text, committed bigint, lease_end bigint, worker_id text, lease_expires_at timestamp with time zone, total_consumed bigint)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT c.consumer_group, c.committed,
         CASE WHEN c.lease_expires_at > now() THEN c.batch_end END,
         CASE WHEN c.batch_end IS NOT NULL AND c.lease_expires_at > now() THEN c.worker_id END,
         CASE WHEN c.batch_end IS NOT NULL AND c.lease_expires_at > now() THEN c.lease_expires_at END,
         c.total_consumed
    FROM queen.log_consumers c WHERE c.partition_id = p_partition
  UNION ALL
  SELECT s.consumer_group,
         CASE WHEN s.start_at IS NULL THEN -1
              WHEN p.last_write_at < s.start_at - interval '2 minutes' THEN p.last_offset
              ELSE queen.offset_at_time(p.id, s.start_at) - 1 END,
         NULL, NULL, NULL, 0
    FROM queen.log_partitions p JOIN queen.consumer_subscriptions s ON s.queue_id = p.queue_id
   WHERE p.id = p_partition
     AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c WHERE c.partition_id = p.id AND c.consumer_group = s.consumer_group)
$function$;

-- GET /consumer-groups/lagging: every (group, partition) whose oldest unconsumed message is older
-- than p_min_lag_seconds, oldest first.
CREATE OR REPLACE FUNCTION queen.lagging_partitions(p_tenant text, p_min_lag_seconds bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'consumer_group', g.consumer_group, 'queue_name', g.queue, 'partition_name', g.partition,
           'partition_id', g.partition_id::text, 'worker_id', g.worker_id, 'offset_lag', g.lag,
           'time_lag_seconds', g.age, 'lag_hours', round(g.age / 3600.0, 2),
           'oldest_unconsumed_at', queen.admin_iso(g.oldest), 'last_consumed_at', NULL)
         ORDER BY g.age DESC, g.consumer_group, g.queue, g.partition), '[]'::jsonb)
    FROM queen.group_partitions(p_tenant, NULL, NULL) g
   WHERE g.lag > 0 AND g.age > p_min_lag_seconds
$function$;
