-- Written by `npm run db:migration` from sql/functions/: read the change there.
-- Claims due partitions of active subscriptions for the dispatcher (docs/delivery.md#dispatch): per
-- subscription, under its row lock (so concurrent dispatchers never pass maxInFlight together),
-- one queen.pop of one partition per free slot, budgeted by the rateLimit bucket. A partition with
-- an outstanding batch (a failure, a throttle, a dispatcher that died) is claimed over exactly that
-- range again, with its webhook-id. The lease's length is queen.delivery_lease_expiry's.
CREATE OR REPLACE FUNCTION queen.delivery_claim(p_queues bigint[], p_max_claims integer, p_max_bytes bigint)
 RETURNS TABLE(claim integer, subscription_id uuid, subscription_name text, tenant_id text, consumer_group text, url text, headers text, secret text, previous_secret text, previous_secret_until timestamp with time zone, timeout_ms integer, retry_base_ms integer, retry_max_ms integer, max_attempts integer, lease_id text, webhook_id text, queue_name text, partition_id bigint, partition_name text, from_offset bigint, batch_end bigint, attempt integer, base_offset bigint, end_offset bigint, created_at timestamp with time zone, blob bytea)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
  v_now TIMESTAMPTZ := now();
  v_claims INT := 0;
  v_sub UUID;
  v_skipped BOOLEAN := false;
  s queen.subscriptions;
  q queen.queues;
  sp queen.subscription_partitions;
  v_free INT;
  v_tokens DOUBLE PRECISION;
  v_cap DOUBLE PRECISION;
  v_budget INT;
  v_lease TEXT;
  v_rows queen.delivery_claim_row[];
  v_first queen.delivery_claim_row;
  v_end BIGINT;
  v_id TEXT;
  v_attempt INT;
BEGIN
  FOR v_sub IN
    SELECT sub.id FROM queen.subscriptions sub
     WHERE sub.state = 'active' AND (p_queues IS NULL OR sub.queue_id = ANY (p_queues))
       AND (sub.throttled_until IS NULL OR sub.throttled_until <= v_now)
       -- Only a subscription that may have work is locked: a row lock makes the statement a write
       -- whose commit waits for the WAL, which an idle sweep or a trigger that finds nothing
       -- should not pay. The tests are pop's own, read without locks.
       AND (SELECT count(*) FROM queen.subscription_partitions x
             WHERE x.subscription_id = sub.id AND x.lease_until > v_now) < sub.max_in_flight
       AND (EXISTS (SELECT 1 FROM queen.log_consumers lc
                     WHERE lc.queue_id = sub.queue_id AND lc.consumer_group = sub.consumer_group AND lc.pending
                       AND NOT (lc.batch_end IS NOT NULL AND lc.lease_expires_at > v_now)
                       AND (lc.retry_not_before IS NULL OR lc.retry_not_before <= v_now))
            OR EXISTS (SELECT 1 FROM queen.consumer_subscriptions cs
                        JOIN queen.log_partitions lp ON lp.queue_id = cs.queue_id
                       WHERE cs.queue_id = sub.queue_id AND cs.consumer_group = sub.consumer_group
                         AND lp.last_write_at >= coalesce(cs.scanned_at, '-infinity'::TIMESTAMPTZ) - queen.write_stamp_quantum()
                         AND lp.last_offset >= lp.log_start)
            OR NOT EXISTS (SELECT 1 FROM queen.consumer_subscriptions cs
                            WHERE cs.queue_id = sub.queue_id AND cs.consumer_group = sub.consumer_group))
     ORDER BY sub.last_attempt_at NULLS FIRST, sub.id
  LOOP
    EXIT WHEN v_claims >= p_max_claims;
    SELECT * INTO s FROM queen.subscriptions sub WHERE sub.id = v_sub AND sub.state = 'active' FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      -- Another statement holds it: a claim whose look may predate a push this caller was started
      -- for. Said in a row of its own (claim 0), so the caller looks again shortly.
      v_skipped := true;
      CONTINUE;
    END IF;
    v_free := s.max_in_flight - (SELECT count(*) FROM queen.subscription_partitions x
                                  WHERE x.subscription_id = s.id AND x.lease_until > v_now);
    CONTINUE WHEN v_free <= 0;
    SELECT * INTO q FROM queen.queues qq WHERE qq.id = s.queue_id;
    -- A bucket of half a second's messages (at least one): any 10 s window sends at most 10.5 s worth.
    v_cap := greatest(1, s.rate_limit / 2.0);
    v_tokens := CASE WHEN s.rate_at IS NULL THEN v_cap
                     ELSE least(v_cap, s.rate_tokens + s.rate_limit * extract(epoch FROM v_now - s.rate_at)) END;
    FOR i IN 1 .. v_free LOOP
      EXIT WHEN v_claims >= p_max_claims;
      v_budget := s.batch_size;
      IF s.rate_limit > 0 THEN
        -- A batch is cut to the tokens there are; a full bucket lets a whole batch go (the bucket
        -- goes into debt), so a batch kept for a retry always fits in the end, whatever the rate.
        EXIT WHEN v_tokens < 1;
        IF v_tokens < v_cap THEN v_budget := least(v_budget, floor(v_tokens)::INT); END IF;
      END IF;
      v_lease := gen_random_uuid()::TEXT;
      v_rows := ARRAY(SELECT (p.claim, p.partition_id, p.partition_name, p.from_offset, p.batch_end,
                              p.base_offset, p.end_offset, p.created_at, p.blob)::queen.delivery_claim_row
                        FROM queen.pop(s.tenant_id, q.name, NULL, NULL, NULL, s.consumer_group, v_budget, 1, v_lease,
                                       false, s.subscription_mode, NULL, p_max_bytes) AS p);
      EXIT WHEN cardinality(v_rows) = 0;
      v_first := v_rows[1];
      SELECT * INTO sp FROM queen.subscription_partitions x
       WHERE x.subscription_id = s.id AND x.partition_id = v_first.partition_id;
      IF sp.webhook_id IS NOT NULL AND sp.from_offset = v_first.from_offset THEN
        IF v_first.batch_end < sp.to_offset THEN
          -- The outstanding batch does not fit this claim (rate bucket or bytes): give it back and
          -- send it whole later, never a part of it under its webhook-id.
          UPDATE queen.log_consumers lc
             SET batch_end = NULL, worker_id = NULL, lease_expires_at = NULL, attempt_count = lc.attempt_count - 1
           WHERE lc.partition_id = v_first.partition_id AND lc.consumer_group = s.consumer_group AND lc.worker_id = v_lease;
          EXIT;
        END IF;
        v_end := sp.to_offset;
        v_id := sp.webhook_id;
      ELSE
        v_end := v_first.batch_end;
        v_id := 'msg_' || replace(gen_random_uuid()::TEXT, '-', '');
      END IF;
      UPDATE queen.log_consumers lc
         SET batch_end = v_end, lease_expires_at = queen.delivery_lease_expiry(v_now, s.timeout_ms)
       WHERE lc.partition_id = v_first.partition_id AND lc.consumer_group = s.consumer_group
      RETURNING CASE WHEN lc.retry_offset = v_first.from_offset THEN lc.batch_retry_count ELSE 0 END + 1 INTO v_attempt;
      INSERT INTO queen.subscription_partitions AS x
             (subscription_id, partition_id, from_offset, to_offset, webhook_id, lease_id, lease_until, next_attempt_at)
      VALUES (s.id, v_first.partition_id, v_first.from_offset, v_end, v_id, v_lease,
              queen.delivery_lease_expiry(v_now, s.timeout_ms), NULL)
      ON CONFLICT (subscription_id, partition_id) DO UPDATE
        SET from_offset = EXCLUDED.from_offset, to_offset = EXCLUDED.to_offset, webhook_id = EXCLUDED.webhook_id,
            lease_id = EXCLUDED.lease_id, lease_until = EXCLUDED.lease_until, next_attempt_at = NULL;
      v_tokens := v_tokens - (v_end - v_first.from_offset + 1);
      v_claims := v_claims + 1;
      RETURN QUERY
        SELECT v_claims, s.id, s.name, s.tenant_id, s.consumer_group, s.url, s.headers, s.secret, s.previous_secret, s.previous_secret_until, s.timeout_ms,
               s.retry_base_ms, s.retry_max_ms, q.retry_limit + 1, v_lease, v_id, q.name, r.partition_id,
               r.partition_name, r.from_offset, v_end, v_attempt, r.base_offset, r.end_offset, r.created_at, r.blob
          FROM unnest(v_rows) AS r
         WHERE r.base_offset <= v_end
         ORDER BY r.base_offset;
    END LOOP;
    IF s.rate_limit > 0 THEN
      UPDATE queen.subscriptions sub SET rate_tokens = v_tokens, rate_at = v_now WHERE sub.id = s.id;
    END IF;
  END LOOP;
  IF v_skipped THEN
    claim := 0;
    RETURN NEXT;
  END IF;
END
$function$;
--> statement-breakpoint
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
--> statement-breakpoint
-- How stale a partition's last_write_at may be: push restamps it only when the stamp is older than
-- this (an indexed column, so a restamping update is not HOT), and every reader that looks for
-- partitions written since an instant subtracts it (the wildcard scan's slack and mark, the
-- delivery sweep). One definition, so the stamp and its readers cannot disagree.
CREATE OR REPLACE FUNCTION queen.write_stamp_quantum()
 RETURNS interval
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT interval '100 milliseconds' $function$;
--> statement-breakpoint
COMMENT ON FUNCTION queen.write_stamp_quantum() IS 'How stale a partition''s last_write_at may be: push restamps it only when the stamp is older than
this (an indexed column, so a restamping update is not HOT), and every reader that looks for
partitions written since an instant subtracts it (the wildcard scan''s slack and mark, the
delivery sweep). One definition, so the stamp and its readers cannot disagree.';
--> statement-breakpoint
-- Writes one segment + one sidecar row per group (one group = one (queue, partition)), or writes
-- nothing and says why, so the broker can fix the request and call again:
--   'ok'      grp, partition_id, base_offset          every group was written
--   'dup'     grp, item, partition_id, msg_offset, base_offset
--             item (0-based within the group's frames) repeats a transactionId already stored
--             inside the queue's dedup window at msg_offset, in the segment based at base_offset
--   'seg'     partition_id, base_offset, blob         that segment, to read original message ids
--   'encrypt' grp     the queue has encryptionEnabled and the group was sent in plaintext
--   'plain'   grp     the queue stores plaintext and the group was sent encrypted
--   'expand'  grp     the queue has dedup off, but the broker collapsed repeated keys
-- Only the frames listed in p_probe_grp/p_probe_item (0-based) are probed: the broker leaves out
-- frames whose transactionId is the message id it just minted, which nothing can repeat.
-- Locks the partitions in id order (no deadlock between multi-partition pushes), probes only
-- after the lock (a concurrent pusher of the same key has committed by then), and stamps
-- created_at after the lock (created_at monotone per partition in commit order).
-- New queues and partitions are made in name order.
--
-- p_keys: each message's key before the partition is mixed in, in the order of p_hashes; NULL (a
-- previous release's call) computes them here. A single-partition push that needs no probe
-- (no client transactionId) is one executor start: lock, allocate and write in one statement; with
-- a probe, two: the lock, then the probe and the write in one statement that sees every push which
-- held the lock before (docs/locking.md#the-order). Anything else takes the general path.
CREATE OR REPLACE FUNCTION queen.push_segments(p_tenant text, p_queues text[], p_partitions text[], p_counts integer[], p_blob_lens integer[], p_blobs bytea, p_hashes bytea, p_encrypted boolean[], p_collapsed boolean[], p_probe_grp integer[], p_probe_item integer[], p_keys bigint[])
 RETURNS TABLE(kind text, grp integer, item integer, partition_id bigint, msg_offset bigint, base_offset bigint, blob bytea)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET max_parallel_workers_per_gather TO '0'
 SET jit TO 'off'
AS $function$
DECLARE
  n INT := coalesce(cardinality(p_queues), 0);
  v_keys BIGINT[] := p_keys;
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
  IF v_keys IS NULL THEN
    v_keys := ARRAY(SELECT ('x' || encode(substring(p_hashes FROM i * 16 + 1 FOR 8), 'hex'))::bit(64)::bigint
                      FROM generate_series(0, length(p_hashes) / 16 - 1) AS i);
  END IF;

  IF n = 1 AND cardinality(p_probe_grp) = 0 THEN
    -- Nothing to probe: a minted id cannot repeat. A miss (new partition, encryption changed)
    -- writes nothing and goes on below.
    RETURN QUERY
      WITH alloc AS (
        UPDATE queen.log_partitions lp
           SET last_offset = lp.last_offset + p_counts[1],
               last_write_at = CASE WHEN clock_timestamp() - lp.last_write_at > queen.write_stamp_quantum() THEN clock_timestamp() ELSE lp.last_write_at END
          FROM queen.queues q
         WHERE q.tenant_id = p_tenant AND q.name = p_queues[1] AND lp.queue_id = q.id AND lp.name = p_partitions[1]
           AND q.encryption_enabled IS NOT DISTINCT FROM p_encrypted[1]
        RETURNING lp.id AS pid, lp.last_offset - p_counts[1] + 1 AS base, lp.last_offset AS last, clock_timestamp() AS at
      ), seg AS (
        INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
        SELECT a.pid, a.base, a.last, a.at, p_blobs FROM alloc a
      ), txn AS (
        INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes, keys)
        SELECT a.pid, a.base, a.last, a.at, p_hashes, ARRAY(SELECT k # a.pid FROM unnest(v_keys) AS k) FROM alloc a
      )
      SELECT 'ok', 0, NULL::INT, a.pid, NULL::BIGINT, a.base, NULL::BYTEA FROM alloc a;
    IF FOUND THEN
      RETURN;
    END IF;
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
    IF found1 AND v_windows[1] > 0 AND NOT p_collapsed[1] AND v_encrypt[1] IS NOT DISTINCT FROM p_encrypted[1] THEN
      -- Probe and write in one statement, under the lock just taken: a hit writes nothing and the
      -- exact per-item check below decides.
      RETURN QUERY
        WITH hit AS (
          SELECT 1 FROM queen.log_txns t
           WHERE COALESCE(t.keys, queen.log_txn_keys64(t.partition_id, t.hashes))
                 && ARRAY(SELECT v_keys[x.k + 1] # v_pids[1] FROM unnest(p_probe_item) AS x(k))
             AND t.created_at > clock_timestamp() - make_interval(secs => v_windows[1])
           LIMIT 1
        ), alloc AS (
          UPDATE queen.log_partitions lp
             SET last_offset = lp.last_offset + p_counts[1],
                 last_write_at = CASE WHEN clock_timestamp() - lp.last_write_at > queen.write_stamp_quantum() THEN clock_timestamp() ELSE lp.last_write_at END
           WHERE lp.id = v_pids[1] AND NOT EXISTS (SELECT 1 FROM hit)
          RETURNING lp.id AS pid, lp.last_offset - p_counts[1] + 1 AS base, lp.last_offset AS last, clock_timestamp() AS at
        ), seg AS (
          INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
          SELECT a.pid, a.base, a.last, a.at, p_blobs FROM alloc a
        ), txn AS (
          INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes, keys)
          SELECT a.pid, a.base, a.last, a.at, p_hashes, ARRAY(SELECT k # a.pid FROM unnest(v_keys) AS k) FROM alloc a
        )
        SELECT 'ok', 0, NULL::INT, a.pid, NULL::BIGINT, a.base, NULL::BYTEA FROM alloc a;
      IF FOUND THEN
        RETURN;
      END IF;
    END IF;
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

  -- Keys are 64 bits of (partition, hash): a sidecar row the index returns almost surely holds one
  -- of them, and the exact per-group check below (full 128-bit hash, window) decides.
  IF v_probe AND cardinality(p_probe_grp) > 0 AND EXISTS (
    SELECT 1 FROM queen.log_txns t
     WHERE COALESCE(t.keys, queen.log_txn_keys64(t.partition_id, t.hashes)) && ARRAY(
             SELECT v_keys[v_frame0[x.g + 1] + x.k + 1] # v_pids[x.g + 1]
               FROM unnest(p_probe_grp, p_probe_item) AS x(g, k)
              WHERE v_since[x.g + 1] IS NOT NULL)
       AND t.created_at > v_oldest
  ) THEN
    RETURN QUERY
      WITH probe AS MATERIALIZED (
        SELECT x.g, x.k, v_pids[x.g + 1] AS pid, v_since[x.g + 1] AS since,
               substring(p_hashes FROM (v_frame0[x.g + 1] + x.k) * 16 + 1 FOR 16) AS h,
               v_keys[v_frame0[x.g + 1] + x.k + 1] # v_pids[x.g + 1] AS key
          FROM unnest(p_probe_grp, p_probe_item) AS x(g, k)
         WHERE v_since[x.g + 1] IS NOT NULL
      ), cand AS MATERIALIZED (
        SELECT t.partition_id, t.base_offset, t.created_at, t.hashes
          FROM queen.log_txns t
         WHERE COALESCE(t.keys, queen.log_txn_keys64(t.partition_id, t.hashes)) && ARRAY(SELECT probe.key FROM probe)
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
             last_write_at = CASE WHEN v_now - lp.last_write_at > queen.write_stamp_quantum() THEN v_now ELSE lp.last_write_at END
        FROM unnest(v_pids) WITH ORDINALITY AS c(pid, g)
       WHERE lp.id = c.pid
      RETURNING c.g, lp.id AS pid, lp.last_offset - p_counts[c.g] + 1 AS base, lp.last_offset AS last
    ), seg AS (
      INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
      SELECT a.pid, a.base, a.last, v_now, substring(p_blobs FROM v_byte0[a.g] + 1 FOR p_blob_lens[a.g]) FROM alloc a
    ), txn AS (
      INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes, keys)
      SELECT a.pid, a.base, a.last, v_now, substring(p_hashes FROM v_frame0[a.g] * 16 + 1 FOR p_counts[a.g] * 16),
             ARRAY(SELECT k # a.pid FROM unnest(v_keys[v_frame0[a.g] + 1 : v_frame0[a.g] + p_counts[a.g]]) AS k)
        FROM alloc a
    )
    SELECT 'ok', (a.g - 1)::INT, NULL::INT, a.pid, NULL::BIGINT, a.base, NULL::BYTEA FROM alloc a;
END
$function$;
