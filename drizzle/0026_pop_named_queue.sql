-- A named pop finds its queue with one index probe (docs/locking.md#the-wildcard-scan): it called
-- queen.ensure_queue, a plpgsql function, on every pop, about 60 µs of a ~400 µs pop under Queen's
-- consumer; ensure_queue now runs only when the queue does not exist yet. And pop_claim, which only
-- pop calls, inherits pop's enable_seqscan = off instead of saving and restoring it per claim, and
-- is called as a plpgsql expression rather than a SELECT, which skipped an executor start per claim.
CREATE OR REPLACE FUNCTION queen.pop(p_tenant text, p_queue text, p_partition text, p_namespace text, p_task text, p_group text, p_batch integer, p_partitions integer, p_lease text, p_auto_ack boolean, p_mode text, p_from timestamp with time zone, p_max_bytes bigint)
 RETURNS TABLE(claim integer, queue_name text, partition_id bigint, partition_name text, from_offset bigint, batch_end bigint, attempt integer, base_offset bigint, end_offset bigint, created_at timestamp with time zone, blob bytea)
 LANGUAGE plpgsql
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
  v_now TIMESTAMPTZ := now();
  v_mark TIMESTAMPTZ;
  q queen.queues;
  sub queen.consumer_subscriptions;
  v_start TIMESTAMPTZ;
  v_budget INT := p_batch;
  v_bytes BIGINT := p_max_bytes;
  v_claims INT := 0;
  v_new BIGINT[];
  v_seen BIGINT[];
  v_complete BOOLEAN;
  r RECORD;
  cl RECORD;
BEGIN
  -- Maintenance mode (docs/semantics.md#maintenance-mode): pops deliver nothing; pushes go on.
  PERFORM 1 FROM queen.tenant_settings ts WHERE ts.tenant_id = p_tenant AND (ts.maintenance OR ts.pop_maintenance);
  IF FOUND THEN
    RETURN;
  END IF;

  FOR q IN
    SELECT qq.* FROM queen.queues qq WHERE p_queue IS NOT NULL AND qq.tenant_id = p_tenant AND qq.name = p_queue
    UNION ALL
    SELECT e.* FROM queen.ensure_queue(p_tenant, p_queue) AS e
     WHERE p_queue IS NOT NULL AND NOT EXISTS (SELECT 1 FROM queen.queues x WHERE x.tenant_id = p_tenant AND x.name = p_queue)
    UNION ALL
    -- Queues in id order: a discovery pop takes its locks queue by queue, in one order for all.
    (SELECT qq.* FROM queen.queues qq
      WHERE p_queue IS NULL AND qq.tenant_id = p_tenant
        AND (p_namespace IS NULL OR qq.namespace = p_namespace) AND (p_task IS NULL OR qq.task = p_task)
      ORDER BY qq.id)
  LOOP
    SELECT * INTO sub FROM queen.consumer_subscriptions cs
     WHERE cs.queue_id = q.id AND cs.consumer_group = p_group;
    IF NOT FOUND THEN
      v_start := CASE p_mode WHEN 'new' THEN v_now WHEN 'from' THEN p_from END;
      INSERT INTO queen.consumer_subscriptions (queue_id, consumer_group, mode, start_at, subscribed_at, scanned_at)
      VALUES (q.id, p_group, p_mode, v_start, v_now, v_start)
      ON CONFLICT DO NOTHING;
      SELECT * INTO sub FROM queen.consumer_subscriptions cs
       WHERE cs.queue_id = q.id AND cs.consumer_group = p_group;
    END IF;
    CONTINUE WHEN v_budget <= 0 OR v_claims >= p_partitions;

    IF p_partition IS NOT NULL THEN
      SELECT lp.id, lp.name INTO r FROM queen.log_partitions lp WHERE lp.queue_id = q.id AND lp.name = p_partition;
      CONTINUE WHEN NOT FOUND;
      cl := queen.pop_claim(q, r.id, p_group, sub.start_at, v_budget, p_lease, p_auto_ack, v_bytes, true, v_now);
      IF cl.status = 'claimed' THEN
        v_claims := v_claims + 1;
        RETURN QUERY
          SELECT v_claims, q.name, r.id, r.name, cl.from_offset, cl.batch_end, cl.attempt,
                 sg.base_offset, sg.end_offset, sg.created_at, sg.blob
            FROM queen.log_segments sg
           WHERE sg.partition_id = r.id AND sg.base_offset BETWEEN cl.first_base AND cl.last_base
           ORDER BY sg.base_offset;
      END IF;
      CONTINUE;
    END IF;

    -- The mark, once per pop, before the first scan: the oldest open transaction's start, but
    -- never more than two minutes back, which no push statement outlives: a session left idle in
    -- a transaction (a forgotten psql, another program) must not make every pop read every
    -- partition written since it began. A session whose transactions this role may not see could
    -- be writing too: then two minutes. Read only when this subscription's mark is over a second
    -- old: a newer one would not be moved, and under load most pops skip it.
    IF v_mark IS NULL AND (sub.scanned_at IS NULL OR sub.scanned_at < v_now - interval '1 second') THEN
      SELECT CASE WHEN bool_or(a.query = '<insufficient privilege>') THEN v_now - interval '2 minutes'
                  ELSE greatest(least(v_now, min(a.xact_start)), v_now - interval '2 minutes') END
        INTO v_mark
        FROM pg_stat_activity a
       WHERE a.datname = current_database() AND a.backend_type = 'client backend';
      v_mark := coalesce(v_mark, v_now);
    END IF;

    -- Phase 1: partitions written since the last scan (one second of slack: push refreshes
    -- last_write_at at most once a second) that the group has no pending cursor on.
    SELECT coalesce(array_agg(lp.id ORDER BY lp.id) FILTER (WHERE lc.partition_id IS NULL), '{}'),
           coalesce(array_agg(lp.id ORDER BY lp.id) FILTER (WHERE lc.partition_id IS NOT NULL), '{}')
      INTO v_new, v_seen
      FROM queen.log_partitions lp
      LEFT JOIN LATERAL (
        SELECT x.partition_id, x.committed, x.pending FROM queen.log_consumers x
         WHERE x.partition_id = lp.id AND x.consumer_group = p_group LIMIT 1
      ) AS lc ON true
     WHERE lp.queue_id = q.id
       AND lp.last_write_at >= coalesce(sub.scanned_at, '-infinity'::timestamptz) - interval '1 second'
       AND lp.last_offset >= lp.log_start
       AND (lc.partition_id IS NULL OR (NOT lc.pending AND lc.committed < lp.last_offset));
    IF cardinality(v_new) > 0 THEN
      INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed, pending)
      SELECT f.id, p_group, q.id, queen.cursor_start(f.id, sub.start_at), true
        FROM unnest(v_new) AS f(id)
       ORDER BY f.id
      ON CONFLICT DO NOTHING;
    END IF;
    v_complete := true;
    IF cardinality(v_seen) > 0 THEN
      UPDATE queen.log_consumers lc SET pending = true
       WHERE (lc.partition_id, lc.consumer_group) IN (
         SELECT x.partition_id, x.consumer_group FROM queen.log_consumers x
          WHERE x.partition_id = ANY (v_seen) AND x.consumer_group = p_group AND NOT x.pending
          ORDER BY x.partition_id
          FOR UPDATE SKIP LOCKED);
      -- A cursor another request holds was skipped: it may yet commit pending = false over a
      -- write it did not see, so the mark stays where it is and the next pop looks again.
      v_complete := NOT EXISTS (
        SELECT 1 FROM queen.log_consumers x
         WHERE x.partition_id = ANY (v_seen) AND x.consumer_group = p_group AND NOT x.pending);
    END IF;

    -- Phase 2: the group's pending cursors, least recently served first; stop when full.
    FOR r IN
      SELECT lc.partition_id AS id, lp.name
        FROM queen.log_consumers lc
        JOIN LATERAL (SELECT y.name FROM queen.log_partitions y WHERE y.id = lc.partition_id LIMIT 1) AS lp ON true
       WHERE lc.queue_id = q.id AND lc.consumer_group = p_group AND lc.pending
         AND NOT (lc.batch_end IS NOT NULL AND lc.lease_expires_at > v_now)
         AND (lc.retry_not_before IS NULL OR lc.retry_not_before <= v_now)
       ORDER BY lc.lease_acquired_at NULLS FIRST, lc.partition_id
    LOOP
      EXIT WHEN v_budget <= 0 OR v_claims >= p_partitions;
      cl := queen.pop_claim(q, r.id, p_group, sub.start_at, v_budget, p_lease, p_auto_ack,
                            v_bytes, v_claims = 0, v_now);
      CONTINUE WHEN cl.status <> 'claimed';
      v_claims := v_claims + 1;
      v_budget := v_budget - cl.taken;
      v_bytes := v_bytes - cl.bytes;
      IF v_bytes <= 0 THEN v_budget := 0; END IF;
      RETURN QUERY
        SELECT v_claims, q.name, r.id, r.name, cl.from_offset, cl.batch_end, cl.attempt,
               sg.base_offset, sg.end_offset, sg.created_at, sg.blob
          FROM queen.log_segments sg
         WHERE sg.partition_id = r.id AND sg.base_offset BETWEEN cl.first_base AND cl.last_base
         ORDER BY sg.base_offset;
    END LOOP;

    -- Advance the mark (at most once a second, never waiting for another pop doing the same).
    IF v_complete AND v_mark IS NOT NULL THEN
      UPDATE queen.consumer_subscriptions cs SET scanned_at = v_mark
       WHERE (cs.queue_id, cs.consumer_group) IN (
         SELECT y.queue_id, y.consumer_group FROM queen.consumer_subscriptions y
          WHERE y.queue_id = q.id AND y.consumer_group = p_group
            AND (y.scanned_at IS NULL OR y.scanned_at < v_mark - interval '1 second')
          FOR UPDATE SKIP LOCKED);
    END IF;
  END LOOP;
END
$function$;
--> statement-breakpoint
ALTER FUNCTION queen.pop_claim(queen.queues, bigint, text, timestamp with time zone, integer, text, boolean, bigint, boolean, timestamp with time zone) RESET enable_seqscan;
