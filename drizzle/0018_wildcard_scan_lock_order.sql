-- One lock order for every statement, and a wildcard pop bounded by what is new (docs/locking.md).
DROP INDEX "queen"."idx_log_consumers_pending";--> statement-breakpoint
CREATE INDEX "idx_log_consumers_pending_served" ON "queen"."log_consumers" USING btree ("queue_id","consumer_group","lease_acquired_at" NULLS FIRST,"partition_id") WHERE pending;--> statement-breakpoint
-- The wildcard scan (docs/locking.md#the-wildcard-scan). A pop's cost is bounded by the partitions
-- written since the group last looked plus the cursors it walks before its batch is full, not by
-- the partitions written in the last two minutes. Phase 1 marks every partition written since the
-- scan mark that the group has not seen (a new cursor, or pending = true); phase 2 walks the
-- group's pending cursors least recently served first, in index order, and stops once the batch is
-- full. The scan mark is the start of the oldest transaction open when the scan began: a write
-- this scan cannot see belongs to a transaction that started after it, and its partition's
-- last_write_at (push keeps it within a second of its transaction's start) is at or after it.
-- Waits: the cursor inserts of phase 1 run in partition order, every other lock a pop takes is
-- SKIP LOCKED, so two pops never wait on each other in a cycle.
CREATE OR REPLACE FUNCTION queen.pop(p_tenant text, p_queue text, p_partition text, p_namespace text, p_task text, p_group text, p_batch integer, p_partitions integer, p_lease text, p_auto_ack boolean, p_mode text, p_from timestamp with time zone, p_max_bytes bigint)
 RETURNS TABLE(claim integer, queue_name text, partition_id bigint, partition_name text, from_offset bigint, batch_end bigint, attempt integer, base_offset bigint, end_offset bigint, created_at timestamp with time zone, blob bytea)
 LANGUAGE plpgsql
 SET jit TO 'off'
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
    SELECT e.* FROM queen.ensure_queue(p_tenant, p_queue) AS e WHERE p_queue IS NOT NULL
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
      SELECT * INTO cl FROM queen.pop_claim(q, r.id, p_group, sub.start_at, v_budget, p_lease, p_auto_ack, v_bytes, true, v_now);
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

    -- The mark, once per pop, before the first scan: the oldest open transaction's start. A
    -- session whose transactions this role may not see could be writing too: then fall back to
    -- two minutes, which no push statement outlives.
    IF v_mark IS NULL THEN
      SELECT CASE WHEN bool_or(a.query = '<insufficient privilege>') THEN v_now - interval '2 minutes'
                  ELSE least(v_now, min(a.xact_start)) END
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
      SELECT * INTO cl FROM queen.pop_claim(q, r.id, p_group, sub.start_at, v_budget, p_lease, p_auto_ack,
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
    IF v_complete THEN
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
-- pop_claim: a cursor that exists but is locked is skipped, never waited for.
CREATE OR REPLACE FUNCTION queen.pop_claim(q queen.queues, p_partition bigint, p_group text, p_start_at timestamp with time zone, p_budget integer, p_lease text, p_auto_ack boolean, p_max_bytes bigint, p_first boolean, p_now timestamp with time zone, OUT status text, OUT from_offset bigint, OUT batch_end bigint, OUT attempt integer, OUT first_base bigint, OUT last_base bigint, OUT taken integer, OUT bytes bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  c queen.log_consumers;
  v_last BIGINT;
  v_log_start BIGINT;
  v_start BIGINT;
  v_seek BIGINT;
  v_newest TIMESTAMPTZ;
  v_lo BIGINT;
  s RECORD;
BEGIN
  taken := 0;
  bytes := 0;
  SELECT * INTO c FROM queen.log_consumers lc
   WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    -- A cursor we cannot lock is another request's: never wait for it (docs/locking.md). Only a
    -- missing one is inserted; the wildcard scan inserts its cursors before it claims any.
    PERFORM 1 FROM queen.log_consumers lc WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
    IF FOUND THEN
      status := 'locked';
      RETURN;
    END IF;
    INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed, pending)
    VALUES (p_partition, p_group, q.id, queen.cursor_start(p_partition, p_start_at), true)
    ON CONFLICT DO NOTHING
    RETURNING * INTO c;
    IF NOT FOUND THEN
      status := 'locked';
      RETURN;
    END IF;
  END IF;

  IF (c.batch_end IS NOT NULL AND c.lease_expires_at > p_now) OR c.retry_not_before > p_now THEN
    status := 'busy';
    RETURN;
  END IF;

  SELECT lp.last_offset, lp.log_start INTO v_last, v_log_start FROM queen.log_partitions lp WHERE lp.id = p_partition;
  -- Retention may have deleted everything the group had left (log_start = last_offset + 1).
  IF c.committed >= v_last OR v_log_start > v_last THEN
    status := 'empty';
    IF c.pending OR c.batch_end IS NOT NULL THEN
      UPDATE queen.log_consumers lc
         SET pending = false, batch_end = NULL, worker_id = NULL, lease_expires_at = NULL
       WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
    END IF;
    RETURN;
  END IF;

  -- windowBuffer holds the whole partition while its newest message is too young.
  IF q.window_buffer > 0 THEN
    SELECT sg.created_at INTO v_newest FROM queen.log_segments sg
     WHERE sg.partition_id = p_partition ORDER BY sg.base_offset DESC LIMIT 1;
  END IF;
  IF v_newest IS NULL OR v_newest <= p_now - make_interval(secs => q.window_buffer) THEN
    -- Nothing below log_start is live (seed invariant 3: it is the first live segment's base), and
    -- starting there keeps a cursor behind a retention gap from walking the deleted prefix's dead
    -- index entries. committed stays where it is: the lease is (committed, batch_end], and the ack
    -- does not count the gap as consumed.
    v_start := greatest(c.committed + 1, v_log_start);
    -- The segment holding v_start (a backward step), or the next one after a gap.
    v_seek := coalesce((SELECT sg.base_offset FROM queen.log_segments sg
                         WHERE sg.partition_id = p_partition AND sg.base_offset <= v_start
                         ORDER BY sg.base_offset DESC LIMIT 1), v_start);
    FOR s IN
      SELECT sg.base_offset, sg.end_offset, sg.created_at, octet_length(sg.blob) AS len
        FROM queen.log_segments sg
       WHERE sg.partition_id = p_partition AND sg.base_offset >= v_seek AND sg.end_offset >= v_start
       ORDER BY sg.base_offset
    LOOP
      -- created_at is monotone per partition: the first segment too young ends the walk.
      EXIT WHEN q.delayed_processing > 0 AND s.created_at > p_now - make_interval(secs => q.delayed_processing);
      EXIT WHEN (taken > 0 OR NOT p_first) AND bytes + s.len > p_max_bytes;
      v_lo := greatest(s.base_offset, v_start);
      IF first_base IS NULL THEN
        first_base := s.base_offset;
        from_offset := v_lo;
      END IF;
      last_base := s.base_offset;
      bytes := bytes + s.len;
      IF taken + (s.end_offset - v_lo + 1) >= p_budget THEN
        batch_end := v_lo + (p_budget - taken) - 1;
        taken := p_budget;
        EXIT;
      END IF;
      taken := taken + (s.end_offset - v_lo + 1)::INT;
      batch_end := s.end_offset;
    END LOOP;
  END IF;

  IF taken = 0 THEN
    status := 'held';
    IF NOT c.pending THEN
      UPDATE queen.log_consumers lc SET pending = true
       WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
    END IF;
    RETURN;
  END IF;

  status := 'claimed';
  attempt := CASE WHEN c.attempt_offset = from_offset THEN c.attempt_count + 1 ELSE 1 END;
  IF p_auto_ack THEN
    UPDATE queen.log_consumers lc
       SET committed = pop_claim.batch_end, batch_end = NULL, worker_id = NULL, lease_expires_at = NULL,
           lease_acquired_at = p_now, attempt_offset = from_offset, attempt_count = attempt,
           total_consumed = lc.total_consumed + taken,
           batch_retry_count = CASE WHEN lc.retry_offset <= pop_claim.batch_end THEN 0 ELSE lc.batch_retry_count END,
           retry_offset = CASE WHEN lc.retry_offset <= pop_claim.batch_end THEN NULL ELSE lc.retry_offset END,
           pending = pop_claim.batch_end < v_last
     WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
  ELSE
    UPDATE queen.log_consumers lc
       SET batch_end = pop_claim.batch_end, worker_id = p_lease, lease_acquired_at = p_now,
           lease_expires_at = p_now + make_interval(secs => q.lease_time),
           attempt_offset = from_offset, attempt_count = attempt, pending = true
     WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
  END IF;
END
$function$;--> statement-breakpoint
-- The rest lock many cursors at once: in partition order, as acks do (docs/locking.md).
CREATE OR REPLACE FUNCTION queen.extend_lease(p_tenant text, p_lease text, p_seconds integer)
 RETURNS TABLE(live integer, expired integer, expires_at timestamp with time zone)
 LANGUAGE sql
AS $function$
  WITH mine AS (
    SELECT lc.partition_id, lc.consumer_group, lc.lease_expires_at > now() AS live
      FROM queen.log_consumers lc
      JOIN queen.log_partitions lp ON lp.id = lc.partition_id
      JOIN queen.queues q ON q.id = lp.queue_id
     WHERE lc.worker_id = p_lease AND lc.batch_end IS NOT NULL AND q.tenant_id = p_tenant
     ORDER BY lc.partition_id, lc.consumer_group
       FOR UPDATE OF lc
  ), upd AS (
    UPDATE queen.log_consumers lc
       SET lease_expires_at = greatest(lc.lease_expires_at, now() + make_interval(secs => p_seconds))
      FROM mine
     WHERE mine.live AND lc.partition_id = mine.partition_id AND lc.consumer_group = mine.consumer_group
       AND lc.worker_id = p_lease
    RETURNING lc.lease_expires_at
  )
  SELECT (SELECT count(*)::INT FROM upd), (SELECT count(*)::INT FROM mine WHERE NOT mine.live),
         (SELECT max(upd.lease_expires_at) FROM upd)
$function$;--> statement-breakpoint
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
$function$;--> statement-breakpoint
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
--> statement-breakpoint
-- push_segments: new queues and partitions made in name order.
CREATE OR REPLACE FUNCTION queen.push_segments(p_tenant text, p_queues text[], p_partitions text[], p_counts integer[], p_blob_lens integer[], p_blobs bytea, p_hashes bytea, p_encrypted boolean[], p_collapsed boolean[], p_probe_grp integer[], p_probe_item integer[])
 RETURNS TABLE(kind text, grp integer, item integer, partition_id bigint, msg_offset bigint, base_offset bigint, blob bytea)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET max_parallel_workers_per_gather TO '0'
 SET jit TO 'off'
AS $function$
DECLARE
  n INT := coalesce(cardinality(p_queues), 0);
  v_pids BIGINT[];
  v_windows INT[];
  v_encrypt BOOLEAN[];
  v_frame0 INT[];
  v_byte0 INT[];
  v_since TIMESTAMPTZ[];
  v_now TIMESTAMPTZ;
  v_issue BOOLEAN := false;
  v_probe BOOLEAN := false;
  v_oldest TIMESTAMPTZ;
  found1 BOOLEAN := false;
  g INT;
  v_name RECORD;
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;

  -- The usual request names one partition that exists: find and lock it in one statement. A miss
  -- (new queue or partition, or deleted while we waited for the lock) locks nothing and takes the
  -- general path below.
  IF n = 1 THEN
    SELECT ARRAY[p.id], ARRAY[q.dedup_window_seconds], ARRAY[q.encryption_enabled]
      INTO v_pids, v_windows, v_encrypt
      FROM queen.queues q
      JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = p_partitions[1]
     WHERE q.tenant_id = p_tenant AND q.name = p_queues[1]
       FOR UPDATE OF p;
    found1 := FOUND;
  END IF;
  -- Twice at most: a queue deleted between provisioning and locking is provisioned again.
  FOR attempt IN 1 .. 2 LOOP
    EXIT WHEN found1;
    SELECT array_agg(p.id ORDER BY u.g), array_agg(q.dedup_window_seconds ORDER BY u.g),
           array_agg(q.encryption_enabled ORDER BY u.g), count(p.id)
      INTO v_pids, v_windows, v_encrypt, g
      FROM unnest(p_queues, p_partitions) WITH ORDINALITY AS u(qname, pname, g)
      LEFT JOIN queen.queues q ON q.tenant_id = p_tenant AND q.name = u.qname
      LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = u.pname;
    IF g < n THEN
      -- New queues and partitions are made in name order, the same for every push, so two pushes
      -- making the same ones never wait for each other in a cycle (docs/locking.md#the-order).
      FOR v_name IN
        SELECT DISTINCT u.qname, u.pname FROM unnest(p_queues, p_partitions) AS u(qname, pname) ORDER BY 1, 2
      LOOP
        PERFORM queen.ensure_partition((queen.ensure_queue(p_tenant, v_name.qname)).id, v_name.pname);
      END LOOP;
      SELECT array_agg(p.id ORDER BY u.g), array_agg(q.dedup_window_seconds ORDER BY u.g),
             array_agg(q.encryption_enabled ORDER BY u.g)
        INTO v_pids, v_windows, v_encrypt
        FROM unnest(p_queues, p_partitions) WITH ORDINALITY AS u(qname, pname, g)
        CROSS JOIN LATERAL queen.ensure_queue(p_tenant, u.qname) AS q
        CROSS JOIN LATERAL queen.ensure_partition(q.id, u.pname) AS p;
    END IF;
    PERFORM 1 FROM queen.log_partitions lp WHERE lp.id = ANY (v_pids) ORDER BY lp.id FOR UPDATE;
    GET DIAGNOSTICS g = ROW_COUNT;
    EXIT WHEN g = n;
    IF attempt = 2 THEN
      RAISE EXCEPTION 'a queue of this push was deleted while the push was writing it; retry the push'
        USING ERRCODE = '40001';
    END IF;
  END LOOP;
  v_now := clock_timestamp();

  -- Blobs and hashes arrive concatenated: one binary parameter each is far cheaper to send than a
  -- bytea[] (drivers text-encode array elements as hex); v_byte0/v_frame0 are each group's start.
  -- Per-group checks and offsets are plpgsql expressions, which skip the executor: every statement
  -- costs an executor start-up, a large part of a small push.
  v_frame0 := array_fill(0, ARRAY[n]);
  v_byte0 := array_fill(0, ARRAY[n]);
  v_since := array_fill(NULL::TIMESTAMPTZ, ARRAY[n]);
  FOR i IN 1 .. n LOOP
    IF i > 1 THEN
      v_frame0[i] := v_frame0[i - 1] + p_counts[i - 1];
      v_byte0[i] := v_byte0[i - 1] + p_blob_lens[i - 1];
    END IF;
    IF v_windows[i] > 0 THEN
      v_since[i] := v_now - make_interval(secs => v_windows[i]);
      v_oldest := least(v_oldest, v_since[i]);
      v_probe := true;
    END IF;
    grp := i - 1;
    partition_id := v_pids[i];
    IF v_encrypt[i] IS DISTINCT FROM p_encrypted[i] THEN
      kind := CASE WHEN v_encrypt[i] THEN 'encrypt' ELSE 'plain' END;
      v_issue := true;
      RETURN NEXT;
    END IF;
    IF v_windows[i] = 0 AND p_collapsed[i] THEN
      kind := 'expand';
      v_issue := true;
      RETURN NEXT;
    END IF;
  END LOOP;

  -- Keys are (partition, hash), so a sidecar row the index returns holds one of them for sure; only
  -- a row inside the widest window needs the exact per-group check, which almost never runs.
  IF v_probe AND cardinality(p_probe_grp) > 0 AND EXISTS (
    SELECT 1 FROM queen.log_txns t
     WHERE queen.log_txn_keys(t.partition_id, t.hashes) && ARRAY(
             SELECT int8send(v_pids[x.g + 1]) || substring(p_hashes FROM (v_frame0[x.g + 1] + x.k) * 16 + 1 FOR 16)
               FROM unnest(p_probe_grp, p_probe_item) AS x(g, k)
              WHERE v_since[x.g + 1] IS NOT NULL)
       AND t.created_at > v_oldest
  ) THEN
    RETURN QUERY
      WITH probe AS MATERIALIZED (
        SELECT x.g, x.k, v_pids[x.g + 1] AS pid, v_since[x.g + 1] AS since,
               substring(p_hashes FROM (v_frame0[x.g + 1] + x.k) * 16 + 1 FOR 16) AS h
          FROM unnest(p_probe_grp, p_probe_item) AS x(g, k)
         WHERE v_since[x.g + 1] IS NOT NULL
      ), cand AS MATERIALIZED (
        SELECT t.partition_id, t.base_offset, t.created_at, t.hashes
          FROM queen.log_txns t
         WHERE queen.log_txn_keys(t.partition_id, t.hashes) && ARRAY(SELECT int8send(probe.pid) || probe.h FROM probe)
      ), dups AS MATERIALIZED (
        SELECT DISTINCT ON (probe.g, probe.k) probe.g, probe.k, probe.pid, c.base_offset + u.idx AS off, c.base_offset AS base
          FROM cand c
          CROSS JOIN LATERAL queen.log_unnest_hashes(c.hashes) AS u
          JOIN probe ON probe.pid = c.partition_id AND probe.h = u.h AND c.created_at > probe.since
         ORDER BY probe.g, probe.k, c.base_offset + u.idx
      )
      SELECT 'dup', d.g, d.k, d.pid, d.off, d.base, NULL::BYTEA FROM dups d
      UNION ALL
      SELECT 'seg', NULL, NULL, o.pid, NULL, o.base,
             (SELECT s.blob FROM queen.log_segments s WHERE s.partition_id = o.pid AND s.base_offset = o.base)
        FROM (SELECT DISTINCT d.pid, d.base FROM dups d) o;
    v_issue := v_issue OR FOUND;
  END IF;
  IF v_issue THEN
    RETURN;
  END IF;

  RETURN QUERY
    WITH alloc AS (
      UPDATE queen.log_partitions lp
         SET last_offset = lp.last_offset + p_counts[c.g],
             last_write_at = CASE WHEN v_now - lp.last_write_at > interval '1 second' THEN v_now ELSE lp.last_write_at END
        FROM unnest(v_pids) WITH ORDINALITY AS c(pid, g)
       WHERE lp.id = c.pid
      RETURNING c.g, lp.id AS pid, lp.last_offset - p_counts[c.g] + 1 AS base, lp.last_offset AS last
    ), seg AS (
      INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
      SELECT a.pid, a.base, a.last, v_now, substring(p_blobs FROM v_byte0[a.g] + 1 FOR p_blob_lens[a.g]) FROM alloc a
    ), txn AS (
      INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
      SELECT a.pid, a.base, a.last, v_now, substring(p_hashes FROM v_frame0[a.g] * 16 + 1 FOR p_counts[a.g] * 16) FROM alloc a
    )
    SELECT 'ok', (a.g - 1)::INT, NULL::INT, a.pid, NULL::BIGINT, a.base, NULL::BYTEA FROM alloc a;
END
$function$;
