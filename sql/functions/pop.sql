-- Pop: the scan for deliverable partitions, the claim of one, and the lease's shrink.

-- Where a new cursor starts for a subscription: -1 (from the beginning) or the end of the last
-- segment created before start_at. A backward step on the primary key from the newest segment:
-- for a `new` group it walks only what arrived after it subscribed.
CREATE OR REPLACE FUNCTION queen.cursor_start(p_partition bigint, p_start_at timestamp with time zone)
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT CASE WHEN p_start_at IS NULL THEN -1 ELSE coalesce((
    SELECT s.end_offset FROM queen.log_segments s
     WHERE s.partition_id = p_partition AND s.created_at < p_start_at
     ORDER BY s.base_offset DESC LIMIT 1), -1) END
$function$;

-- The whole pop in one call. Named partition, wildcard (p_partition NULL) or discovery (p_queue
-- NULL: every queue of the tenant matching namespace/task). Returns the claimed partitions' whole
-- segment rows in claim order; the broker decodes and slices [from_offset, batch_end]. A named pop
-- finds its queue with one index probe; ensure_queue runs only when the queue does not exist yet.
--
-- The wildcard scan (docs/locking.md#the-wildcard-scan,
-- docs/semantics.md#wildcard-and-discovery-pops), never the whole queue: a pop's cost is bounded by
-- the partitions written since the group last looked plus the cursors it walks before its batch is
-- full. Phase 1 marks every partition written since the group's scan mark that the group has not
-- seen (a new cursor, or pending = true), so an old backlog stays findable however long the group
-- stays away; phase 2 walks the group's pending cursors least recently served first, in index
-- order, and stops once the batch is full. The scan mark is the start of the oldest transaction
-- open when the scan began: a write this scan cannot see belongs to a transaction that started
-- after it, and its partition's last_write_at (push keeps it within 100 ms of its transaction's
-- start) is at or after it, less that slack. The mark never lags more than two minutes: the oldest open transaction
-- may belong to anyone, and no push statement runs that long. The mark reads pg_stat_activity only
-- when it could move (at most ten times a second per group): the scan reads every partition
-- written since the mark less the slack, so a mark a second old made each pop read a second or two of
-- writes, nearly every partition of a queue spread over a thousand. A new group starts with no mark: its first
-- wildcard pop visits the queue once (from the beginning) or the partitions written since it
-- subscribed (`new`, timestamp).
--
-- Waits: the cursor inserts of phase 1 run in partition order, every other lock a pop takes is
-- SKIP LOCKED, so two pops never wait on each other in a cycle. pop_claim inherits this function's
-- settings and is called as a plpgsql expression (no executor start per claim).
--
-- Plans: generic, as push_segments' (plan_cache_mode). On its own PostgreSQL re-planned the
-- statements over `= ANY (v_seen)` on every call (a custom plan looks cheaper for one element):
-- 200 µs of a pop's ~1.8 ms of CPU, for the same index plans (bench/pop-cost.ts).
CREATE OR REPLACE FUNCTION queen.pop(p_tenant text, p_queue text, p_partition text, p_namespace text, p_task text, p_group text, p_batch integer, p_partitions integer, p_lease text, p_auto_ack boolean, p_mode text, p_from timestamp with time zone, p_max_bytes bigint)
 RETURNS TABLE(claim integer, queue_name text, partition_id bigint, partition_name text, from_offset bigint, batch_end bigint, attempt integer, base_offset bigint, end_offset bigint, created_at timestamp with time zone, blob bytea)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
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
    -- be writing too: then two minutes. Read only when this subscription's mark is over 100 ms
    -- old: a newer one would not be moved, and under load most pops skip it.
    IF v_mark IS NULL AND (sub.scanned_at IS NULL OR sub.scanned_at < v_now - queen.write_stamp_quantum()) THEN
      SELECT CASE WHEN bool_or(a.query = '<insufficient privilege>') THEN v_now - interval '2 minutes'
                  ELSE greatest(least(v_now, min(a.xact_start)), v_now - interval '2 minutes') END
        INTO v_mark
        FROM pg_stat_activity a
       WHERE a.datname = current_database() AND a.backend_type = 'client backend';
      v_mark := coalesce(v_mark, v_now);
    END IF;

    -- Phase 1: partitions written since the last scan (100 ms of slack: push refreshes
    -- last_write_at at most every 100 ms) that the group has no pending cursor on.
    SELECT coalesce(array_agg(lp.id ORDER BY lp.id) FILTER (WHERE lc.partition_id IS NULL), '{}'),
           coalesce(array_agg(lp.id ORDER BY lp.id) FILTER (WHERE lc.partition_id IS NOT NULL), '{}')
      INTO v_new, v_seen
      FROM queen.log_partitions lp
      LEFT JOIN LATERAL (
        SELECT x.partition_id, x.committed, x.pending FROM queen.log_consumers x
         WHERE x.partition_id = lp.id AND x.consumer_group = p_group LIMIT 1
      ) AS lc ON true
     WHERE lp.queue_id = q.id
       AND lp.last_write_at >= coalesce(sub.scanned_at, '-infinity'::timestamptz) - queen.write_stamp_quantum()
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

    -- Advance the mark (at most every 100 ms, never waiting for another pop doing the same).
    IF v_complete AND v_mark IS NOT NULL THEN
      UPDATE queen.consumer_subscriptions cs SET scanned_at = v_mark
       WHERE (cs.queue_id, cs.consumer_group) IN (
         SELECT y.queue_id, y.consumer_group FROM queen.consumer_subscriptions y
          WHERE y.queue_id = q.id AND y.consumer_group = p_group
            AND (y.scanned_at IS NULL OR y.scanned_at < v_mark - queen.write_stamp_quantum())
          FOR UPDATE SKIP LOCKED);
    END IF;
  END LOOP;
END
$function$;

-- Claims one partition for a group: locks (or creates) its cursor row without waiting (a locked
-- cursor is skipped, never waited for), checks the lease, retryDelay, windowBuffer and
-- delayedProcessing, walks the segments after the cursor until the message budget (or the byte
-- budget) is spent and leases exactly (committed, batch_end].
-- status: claimed | locked (another pop or ack holds the row) | busy (live lease, retry delay) |
-- empty (caught up) | held (has messages, not deliverable yet).
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
    -- Nothing below log_start is live (it is the first live segment's base,
    -- docs/storage.md#the-retention-watermark), and starting there keeps a cursor behind a retention gap from walking the deleted prefix's dead
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
$function$;

-- The rare paths where the broker returned less than it leased (the response cap), or nothing at
-- all (the response could not be built: a wrong encryption key, a corrupt segment): each claimed
-- partition's lease ends at what was delivered (p_ends; NULL = nothing delivered: lease released,
-- and the attempt it counted is taken back). Guarded by the lease id, or for autoAck by the
-- cursor still being where the pop put it.
CREATE OR REPLACE FUNCTION queen.pop_shrink(p_tenant text, p_group text, p_lease text, p_partitions bigint[], p_claimed bigint[], p_ends bigint[], p_from bigint[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF p_lease IS NULL THEN
    UPDATE queen.log_consumers lc
       SET committed = coalesce(u.new_end, u.from_offset - 1), pending = true,
           total_consumed = lc.total_consumed - (u.claimed - coalesce(u.new_end, u.from_offset - 1)),
           attempt_count = CASE WHEN u.new_end IS NULL THEN lc.attempt_count - 1 ELSE lc.attempt_count END
      FROM unnest(p_partitions, p_claimed, p_ends, p_from) AS u(pid, claimed, new_end, from_offset)
     WHERE lc.partition_id = u.pid AND lc.consumer_group = p_group AND lc.committed = u.claimed;
  ELSE
    UPDATE queen.log_consumers lc
       SET batch_end = u.new_end,
           worker_id = CASE WHEN u.new_end IS NULL THEN NULL ELSE lc.worker_id END,
           lease_expires_at = CASE WHEN u.new_end IS NULL THEN NULL ELSE lc.lease_expires_at END,
           attempt_count = CASE WHEN u.new_end IS NULL THEN lc.attempt_count - 1 ELSE lc.attempt_count END
      FROM unnest(p_partitions, p_claimed, p_ends) AS u(pid, claimed, new_end)
     WHERE lc.partition_id = u.pid AND lc.consumer_group = p_group AND lc.worker_id = p_lease
       AND lc.batch_end = u.claimed;
  END IF;
END
$function$;
