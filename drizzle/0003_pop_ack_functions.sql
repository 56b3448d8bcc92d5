-- The read path: pop (claim + lease), ack (cursor commit, retry budget, dead-letter move), lease
-- extend. The cursor's queue_id / pending columns and the subscription's scanned_at are in
-- 0000 (lib/db/schema.ts); their triggers are here.
-- Cursor rows created by other paths (seek) get their queue_id here; a cursor moved backwards has
-- something to deliver again. Both fire rarely: inserts are once per (partition, group), and the
-- WHEN clause is evaluated without entering plpgsql.
CREATE OR REPLACE FUNCTION queen.log_consumers_fill_queue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.queue_id := (SELECT p.queue_id FROM queen.log_partitions p WHERE p.id = NEW.partition_id);
  RETURN NEW;
END
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS log_consumers_fill_queue ON queen.log_consumers;
--> statement-breakpoint
CREATE TRIGGER log_consumers_fill_queue BEFORE INSERT ON queen.log_consumers
  FOR EACH ROW WHEN (NEW.queue_id IS NULL) EXECUTE FUNCTION queen.log_consumers_fill_queue();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION queen.log_consumers_rewound() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.pending := true;
  RETURN NEW;
END
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS log_consumers_rewound ON queen.log_consumers;
--> statement-breakpoint
CREATE TRIGGER log_consumers_rewound BEFORE UPDATE ON queen.log_consumers
  FOR EACH ROW WHEN (NEW.committed < OLD.committed AND NOT NEW.pending) EXECUTE FUNCTION queen.log_consumers_rewound();
--> statement-breakpoint
-- Where a new cursor starts for a subscription: -1 (from the beginning) or the end of the last
-- segment created before start_at. A backward step on the primary key from the newest segment:
-- for a `new` group it walks only what arrived after it subscribed.
CREATE OR REPLACE FUNCTION queen.cursor_start(p_partition BIGINT, p_start_at TIMESTAMPTZ)
RETURNS BIGINT
LANGUAGE sql STABLE
AS $$
  SELECT CASE WHEN p_start_at IS NULL THEN -1 ELSE coalesce((
    SELECT s.end_offset FROM queen.log_segments s
     WHERE s.partition_id = p_partition AND s.created_at < p_start_at
     ORDER BY s.base_offset DESC LIMIT 1), -1) END
$$;
--> statement-breakpoint
-- Claims one partition for a group: locks (or creates) its cursor row without waiting, checks the
-- lease, retryDelay, windowBuffer and delayedProcessing, walks the segments after the cursor until
-- the message budget (or the byte budget) is spent and leases exactly (committed, batch_end].
-- status: claimed | locked (another pop or ack holds the row) | busy (live lease, retry delay) |
-- empty (caught up) | held (has messages, not deliverable yet).
CREATE OR REPLACE FUNCTION queen.pop_claim(
  q queen.queues, p_partition BIGINT, p_group TEXT, p_start_at TIMESTAMPTZ, p_budget INT,
  p_lease TEXT, p_auto_ack BOOLEAN, p_max_bytes BIGINT, p_first BOOLEAN, p_now TIMESTAMPTZ,
  OUT status TEXT, OUT from_offset BIGINT, OUT batch_end BIGINT, OUT attempt INT,
  OUT first_base BIGINT, OUT last_base BIGINT, OUT taken INT, OUT bytes BIGINT)
LANGUAGE plpgsql
AS $$
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
$$;
--> statement-breakpoint
-- The whole pop in one call. Named partition, wildcard (p_partition NULL) or discovery (p_queue
-- NULL: every queue of the tenant matching namespace/task). Returns the claimed partitions'
-- whole segment rows in claim order; the broker decodes and slices [from_offset, batch_end].
--
-- Wildcard candidates (HARD-PARTS §2), never the whole queue:
--   a) partitions written since this group's previous scan of the queue, minus 2 minutes of slack
--      (idx_log_partitions_queue_write; last_write_at is quantized to 1 s and stamped before commit);
--   b) this group's cursors flagged pending (idx_log_consumers_pending): a backlog left by a
--      partial pop, an expired lease, a retry, or a window/delay hold.
-- Every candidate of a) that is not claimed but has a backlog is flagged pending before the scan
-- mark advances, so an old backlog stays findable however long the group stays away. A new group
-- starts with no scan mark: its first wildcard pop visits the queue once (from the beginning) or
-- the partitions written since it subscribed (`new`, timestamp).
CREATE OR REPLACE FUNCTION queen.pop(
  p_tenant TEXT, p_queue TEXT, p_partition TEXT, p_namespace TEXT, p_task TEXT, p_group TEXT,
  p_batch INT, p_partitions INT, p_lease TEXT, p_auto_ack BOOLEAN, p_mode TEXT, p_from TIMESTAMPTZ,
  p_max_bytes BIGINT)
RETURNS TABLE (claim INT, queue_name TEXT, partition_id BIGINT, partition_name TEXT, from_offset BIGINT,
               batch_end BIGINT, attempt INT, base_offset BIGINT, end_offset BIGINT,
               created_at TIMESTAMPTZ, blob BYTEA)
LANGUAGE plpgsql
-- The candidate scan of a queue with thousands of recently written partitions is costed above
-- jit_above_cost, and so are the custom plans (the first five on a connection) of a large ack:
-- a JIT compile, plus loading LLVM on a fresh backend, for a statement of a few ms.
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  v_now TIMESTAMPTZ := now();
  q queen.queues;
  sub queen.consumer_subscriptions;
  v_start TIMESTAMPTZ;
  v_budget INT := p_batch;
  v_bytes BIGINT := p_max_bytes;
  v_claims INT := 0;
  v_flag BIGINT[];
  v_clean BIGINT[];
  r RECORD;
  cl RECORD;
BEGIN
  FOR q IN
    SELECT e.* FROM queen.ensure_queue(p_tenant, p_queue) AS e WHERE p_queue IS NOT NULL
    UNION ALL
    SELECT qq.* FROM queen.queues qq
     WHERE p_queue IS NULL AND qq.tenant_id = p_tenant
       AND (p_namespace IS NULL OR qq.namespace = p_namespace) AND (p_task IS NULL OR qq.task = p_task)
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

    v_flag := '{}';
    v_clean := '{}';
    FOR r IN
      WITH cand AS (
        SELECT lp.id FROM queen.log_partitions lp
         WHERE lp.queue_id = q.id
           AND lp.last_write_at >= coalesce(sub.scanned_at, '-infinity'::timestamptz) - interval '2 minutes'
        UNION
        SELECT lc.partition_id FROM queen.log_consumers lc
         WHERE lc.queue_id = q.id AND lc.consumer_group = p_group AND lc.pending
      )
      SELECT lp.id, lp.name, lp.last_offset, lc.committed, lc.pending,
             lc.partition_id IS NOT NULL AS has_cursor,
             (lc.batch_end IS NOT NULL AND lc.lease_expires_at > v_now) OR lc.retry_not_before > v_now AS busy
        -- LIMIT 1 keeps both lookups parameterized index probes per candidate, whatever the
        -- generic plan guesses about the candidate count (never a scan of the queue's partitions).
        FROM cand
        JOIN LATERAL (SELECT y.* FROM queen.log_partitions y WHERE y.id = cand.id LIMIT 1) AS lp ON true
        LEFT JOIN LATERAL (
          SELECT x.* FROM queen.log_consumers x
           WHERE x.partition_id = cand.id AND x.consumer_group = p_group LIMIT 1
        ) AS lc ON true
       WHERE lc.partition_id IS NULL OR lc.committed < lp.last_offset OR lc.pending
       ORDER BY lc.lease_acquired_at NULLS FIRST, lp.id
    LOOP
      IF r.has_cursor AND r.committed >= r.last_offset THEN
        IF r.pending THEN v_clean := v_clean || r.id; END IF;
        CONTINUE;
      END IF;
      CONTINUE WHEN r.busy;
      IF v_budget <= 0 OR v_claims >= p_partitions THEN
        IF NOT r.has_cursor OR NOT r.pending THEN v_flag := v_flag || r.id; END IF;
        CONTINUE;
      END IF;
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

    IF cardinality(v_flag) > 0 THEN
      UPDATE queen.log_consumers lc SET pending = true
       WHERE (lc.partition_id, lc.consumer_group) IN (
         SELECT x.partition_id, x.consumer_group FROM queen.log_consumers x
          WHERE x.partition_id = ANY (v_flag) AND x.consumer_group = p_group AND NOT x.pending
          FOR UPDATE SKIP LOCKED);
      INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed, pending)
      SELECT f.id, p_group, q.id, queen.cursor_start(f.id, sub.start_at), true FROM unnest(v_flag) AS f(id)
      ON CONFLICT DO NOTHING;
    END IF;
    IF cardinality(v_clean) > 0 THEN
      UPDATE queen.log_consumers lc SET pending = false
        FROM queen.log_partitions lp
       WHERE lp.id = lc.partition_id AND lc.committed >= lp.last_offset
         AND (lc.partition_id, lc.consumer_group) IN (
           SELECT x.partition_id, x.consumer_group FROM queen.log_consumers x
            WHERE x.partition_id = ANY (v_clean) AND x.consumer_group = p_group AND x.pending
            FOR UPDATE SKIP LOCKED);
    END IF;
    UPDATE queen.consumer_subscriptions cs SET scanned_at = v_now
     WHERE cs.queue_id = q.id AND cs.consumer_group = p_group
       AND (cs.scanned_at IS NULL OR cs.scanned_at < v_now - interval '1 second');
  END LOOP;
END
$$;
--> statement-breakpoint
-- The rare paths where the broker returned less than it leased (the response cap), or nothing at
-- all (the response could not be built: a wrong encryption key, a corrupt segment): each claimed
-- partition's lease ends at what was delivered (p_ends; NULL = nothing delivered: lease released,
-- and the attempt it counted is taken back). Guarded by the lease id, or for autoAck by the
-- cursor still being where the pop put it.
CREATE OR REPLACE FUNCTION queen.pop_shrink(
  p_tenant TEXT, p_group TEXT, p_lease TEXT, p_partitions BIGINT[], p_claimed BIGINT[], p_ends BIGINT[],
  p_from BIGINT[])
RETURNS VOID
LANGUAGE plpgsql
AS $$
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
$$;
--> statement-breakpoint
-- Ack, one call for any number of items (SPEC §3.3). Per (partition, group), in a stable order:
-- lock the cursor, check each item's lease, resolve transactionId -> offset through the sidecar
-- hashes over (committed, batch_end] (leased) or (committed, last_offset] (no lease), lowest
-- match, then move the cursor once: highest completed offset clamped below the lowest
-- non-completed signal F (dlq > failed > retry at equal offsets), then apply F.
-- Two things SQL cannot do alone, answered with `need` rows instead of results for that group
-- (nothing of the group is written; the broker calls again with what was asked for):
--   'decode' the hash is below txns_start (purged): these segments must be searched for the id
--   'frame'  the group dead-letters offset F: the frame at F, decoded, goes into log_dlq
-- The second call recomputes everything under the cursor lock, so the DLQ copy and the cursor move
-- commit together and only if the recomputation still dead-letters that same offset.
CREATE OR REPLACE FUNCTION queen.ack(
  p_tenant TEXT, p_idx INT[], p_partitions BIGINT[], p_groups TEXT[], p_hashes BYTEA[], p_offsets BIGINT[],
  p_statuses TEXT[], p_leases TEXT[], p_errors TEXT[],
  f_partitions BIGINT[] DEFAULT NULL, f_offsets BIGINT[] DEFAULT NULL, f_message_ids UUID[] DEFAULT NULL,
  f_txns TEXT[] DEFAULT NULL, f_traces UUID[] DEFAULT NULL, f_subs TEXT[] DEFAULT NULL,
  f_payloads BYTEA[] DEFAULT NULL, f_encrypted BOOLEAN[] DEFAULT NULL, f_created TIMESTAMPTZ[] DEFAULT NULL)
RETURNS TABLE (idx INT, success BOOLEAN, error TEXT, queue_name TEXT, partition_name TEXT,
               lease_released BOOLEAN, dlq BOOLEAN, skipped BOOLEAN, committed BOOLEAN, msg_offset BIGINT,
               need TEXT, need_partition BIGINT, need_from BIGINT, need_to BIGINT, base_offset BIGINT,
               end_offset BIGINT, created_at TIMESTAMPTZ, blob BYTEA)
LANGUAGE plpgsql
-- Generic plans read the array variables in place (p_statuses[k] is O(1) on the expanded array); a
-- custom plan inlines each array as a constant, and subscripting a flat array of text, bytea or
-- with NULLs walks it from the start, which made every per-item statement quadratic (10,000 items:
-- a second). No statement here wants a value-specific plan except the GIN probe, which is EXECUTEd.
-- The lookups are SELECT ... INTO rather than FOR-IN loops for the same reason: a loop's cursor
-- copies its parameters, flattening the arrays again.
-- See queen.pop for jit: array-driven row estimates would buy a compile for a cheap statement.
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  n INT := coalesce(cardinality(p_idx), 0);
  v_now TIMESTAMPTZ := now();
  g RECORD;
  pq RECORD;
  c queen.log_consumers;
  k INT;
  j INT;
  v_ks INT[];
  v_pend INT[];
  v_o BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  v_hi BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  v_err TEXT[] := array_fill(NULL::TEXT, ARRAY[n]);
  v_live BOOLEAN;
  v_from BIGINT;
  v_to BIGINT;
  v_himax BIGINT;
  v_span BIGINT;
  v_rk INT[];
  v_ro BIGINT[];
  v_c BIGINT;
  v_f BIGINT;
  v_fk INT;
  v_fstatus TEXT;
  v_new BIGINT;
  v_count INT;
  v_retry_offset BIGINT;
  v_rnb TIMESTAMPTZ;
  v_release BOOLEAN;
  v_move BOOLEAN;
  v_dlq BOOLEAN;
  v_skip BOOLEAN;
  v_released BOOLEAN;
  v_probe BOOLEAN;
BEGIN
  <<groups>>
  FOR g IN SELECT DISTINCT u.pid, u.grp FROM unnest(p_partitions, p_groups) AS u(pid, grp) ORDER BY 1, 2 LOOP
    v_ks := ARRAY(SELECT s.k FROM generate_subscripts(p_partitions, 1) AS s(k)
                   WHERE p_partitions[s.k] = g.pid AND p_groups[s.k] = g.grp ORDER BY s.k);
    SELECT lp.id, lp.name AS pname, lp.last_offset, lp.log_start, lp.txns_start, qq.id AS qid, qq.name AS qname,
           qq.retry_limit, qq.retry_delay, qq.dead_letter_queue AND qq.dlq_after_max_retries AS has_dlq
      INTO pq
      FROM queen.log_partitions lp JOIN queen.queues qq ON qq.id = lp.queue_id
     WHERE lp.id = g.pid AND qq.tenant_id = p_tenant;
    IF NOT FOUND THEN
      RETURN QUERY SELECT p_idx[x.k], false, 'Message not found', NULL::TEXT, NULL::TEXT, false, false, false,
                          false, NULL::BIGINT, NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT,
                          NULL::BIGINT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::BYTEA
                     FROM unnest(v_ks) AS x(k);
      CONTINUE;
    END IF;

    -- A failed/dlq ack may end in a dead-letter move that needs the frame first. Look without
    -- locking, so a call that only asks for the frame writes nothing (no commit flush); anything
    -- else is recomputed under the lock.
    v_probe := f_partitions IS NULL
               AND EXISTS (SELECT 1 FROM unnest(v_ks) AS x(k) WHERE p_statuses[x.k] IN ('failed', 'dlq'));
    <<attempt>>
    LOOP
    IF v_probe THEN
      SELECT * INTO c FROM queen.log_consumers lc WHERE lc.partition_id = g.pid AND lc.consumer_group = g.grp;
      IF NOT FOUND THEN
        v_probe := false;
        CONTINUE attempt;
      END IF;
    ELSE
      SELECT * INTO c FROM queen.log_consumers lc
       WHERE lc.partition_id = g.pid AND lc.consumer_group = g.grp FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed, pending)
        VALUES (g.pid, g.grp, pq.qid, queen.cursor_start(g.pid, (
                  SELECT cs.start_at FROM queen.consumer_subscriptions cs
                   WHERE cs.queue_id = pq.qid AND cs.consumer_group = g.grp)), true)
        ON CONFLICT DO NOTHING;
        SELECT * INTO c FROM queen.log_consumers lc
         WHERE lc.partition_id = g.pid AND lc.consumer_group = g.grp FOR UPDATE;
      END IF;
    END IF;
    FOREACH k IN ARRAY v_ks LOOP
      v_o[k] := NULL; v_hi[k] := NULL; v_err[k] := NULL;
    END LOOP;
    v_live := c.batch_end IS NOT NULL AND c.lease_expires_at > v_now;

    FOREACH k IN ARRAY v_ks LOOP
      IF p_leases[k] IS NOT NULL THEN
        IF NOT v_live OR c.worker_id IS DISTINCT FROM p_leases[k] THEN
          v_err[k] := 'Invalid or expired lease';
          CONTINUE;
        END IF;
        v_hi[k] := c.batch_end;
      ELSIF v_live THEN
        v_err[k] := 'Another consumer holds the lease on this partition; ack with the leaseId the pop returned';
        CONTINUE;
      ELSE
        v_hi[k] := pq.last_offset;
      END IF;
      IF p_offsets[k] IS NOT NULL THEN
        IF p_offsets[k] <= c.committed THEN
          v_o[k] := p_offsets[k];
        ELSIF p_offsets[k] > v_hi[k] THEN
          v_err[k] := 'Message not found';
        ELSIF p_offsets[k] >= pq.txns_start AND p_hashes[k] IS NOT NULL AND NOT coalesce((
                SELECT t.end_offset >= p_offsets[k]
                       AND substring(t.hashes FROM (p_offsets[k] - t.base_offset)::INT * 16 + 1 FOR 16) = p_hashes[k]
                  FROM queen.log_txns t
                 WHERE t.partition_id = g.pid AND t.base_offset <= p_offsets[k]
                 ORDER BY t.base_offset DESC LIMIT 1), false) THEN
          v_err[k] := 'Message not found';
        ELSE
          v_o[k] := p_offsets[k];
        END IF;
      ELSIF p_hashes[k] IS NULL THEN
        v_err[k] := 'Message not found';
      END IF;
    END LOOP;

    v_pend := ARRAY(SELECT x.k FROM unnest(v_ks) AS x(k) WHERE v_err[x.k] IS NULL AND v_o[x.k] IS NULL);
    IF cardinality(v_pend) > 0 THEN
      -- Below the watermarks there are only dead index entries: never step back through them.
      v_from := greatest(c.committed + 1, pq.txns_start);
      v_from := coalesce((SELECT t.base_offset FROM queen.log_txns t
                           WHERE t.partition_id = g.pid AND t.base_offset <= v_from
                           ORDER BY t.base_offset DESC LIMIT 1), v_from);
      v_himax := (SELECT max(v_hi[x.k]) FROM unnest(v_pend) AS x(k));

      v_span := v_himax - v_from + 1;
      IF v_span <= 64 * cardinality(v_pend) THEN
        -- The range is about as large as the request (a batch acked by transactionId): explode its
        -- sidecar rows once into (offset, hash) and hash-join the request, linear in both.
        SELECT array_agg(r.k), array_agg(r.o) INTO v_rk, v_ro FROM (
          WITH want AS MATERIALIZED (
            SELECT x.k, p_hashes[x.k] AS h, v_hi[x.k] AS hi FROM unnest(v_pend) AS x(k)
          ), cand AS MATERIALIZED (
            SELECT t.base_offset + u.idx AS o, u.h
              FROM queen.log_txns t CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) AS u
             WHERE t.partition_id = g.pid AND t.base_offset >= v_from AND t.base_offset <= v_himax
          )
          SELECT want.k, min(cand.o) AS o
            FROM want JOIN cand ON cand.h = want.h AND cand.o > c.committed AND cand.o <= want.hi
           GROUP BY want.k
        ) AS r;
      ELSIF cardinality(v_pend) < 16 THEN
        -- A few ids in a long range: position() finds a 16-byte hash in a sidecar row in C; only a
        -- match that is misaligned or outside the range (a repeated transactionId) explodes the row.
        SELECT array_agg(r.k), array_agg(r.o) INTO v_rk, v_ro FROM (
          WITH want AS (
            SELECT x.k, p_hashes[x.k] AS h, v_hi[x.k] AS hi FROM unnest(v_pend) AS x(k)
          ), hit AS (
            SELECT want.k, want.h, want.hi, t.base_offset AS base, t.hashes, position(want.h IN t.hashes) AS pos
              FROM want JOIN queen.log_txns t
                ON t.partition_id = g.pid AND t.base_offset >= v_from AND t.base_offset <= want.hi
          )
          SELECT hit.k, min(CASE
                   WHEN (hit.pos - 1) % 16 = 0 AND hit.base + (hit.pos - 1) / 16 > c.committed
                        AND hit.base + (hit.pos - 1) / 16 <= hit.hi THEN hit.base + (hit.pos - 1) / 16
                   ELSE (SELECT min(hit.base + u.idx) FROM queen.log_unnest_hashes(hit.hashes) AS u
                          WHERE u.h = hit.h AND hit.base + u.idx > c.committed AND hit.base + u.idx <= hit.hi)
                 END) AS o
            FROM hit WHERE hit.pos > 0 GROUP BY hit.k
        ) AS r;
      ELSE
        -- Many ids in a range far longer than the request (an unleased ack of a cursor far behind):
        -- the dedup GIN index of 0002 returns only the sidecar rows holding one of the keys. EXECUTE
        -- plans it with the values: a cached generic plan would rather walk the range on the
        -- primary key and compute every row's keys.
        EXECUTE $q$
          SELECT array_agg(r.k), array_agg(r.o) FROM (
          WITH want AS MATERIALIZED (
            SELECT w.k, w.h, w.hi FROM unnest($1::INT[], $2::BYTEA[], $3::BIGINT[]) AS w(k, h, hi)
          ), hit_rows AS MATERIALIZED (
            SELECT t.base_offset, t.hashes FROM queen.log_txns t
             WHERE queen.log_txn_keys(t.partition_id, t.hashes) && ARRAY(SELECT int8send($4::BIGINT) || want.h FROM want)
               AND t.partition_id = $4 AND t.base_offset >= $5 AND t.base_offset <= $6
          ), cand AS MATERIALIZED (
            SELECT r.base_offset + u.idx AS o, u.h FROM hit_rows r CROSS JOIN LATERAL queen.log_unnest_hashes(r.hashes) AS u
          )
          SELECT want.k, min(cand.o) AS o
            FROM want JOIN cand ON cand.h = want.h AND cand.o > $7 AND cand.o <= want.hi
           GROUP BY want.k
          ) AS r
        $q$ INTO v_rk, v_ro USING v_pend, ARRAY(SELECT p_hashes[x.k] FROM unnest(v_pend) WITH ORDINALITY AS x(k, n) ORDER BY x.n),
                  ARRAY(SELECT v_hi[x.k] FROM unnest(v_pend) WITH ORDINALITY AS x(k, n) ORDER BY x.n),
                  g.pid, v_from, v_himax, c.committed;
      END IF;
      FOR j IN 1 .. coalesce(cardinality(v_rk), 0) LOOP
        v_o[v_rk[j]] := v_ro[j];
      END LOOP;
      IF EXISTS (SELECT 1 FROM unnest(v_pend) AS x(k) WHERE v_o[x.k] IS NULL) THEN
        -- Live segments whose sidecar rows were purged: [max(committed + 1, log_start), txns_start).
        -- Empty when retention took them too: then the id is not there to find.
        v_from := greatest(c.committed + 1, pq.log_start);
        v_to := least(v_himax, pq.txns_start - 1);
        IF v_from <= v_to THEN
          RETURN QUERY
            SELECT NULL::INT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::BOOLEAN,
                   NULL::BOOLEAN, NULL::BOOLEAN, NULL::BIGINT, 'decode', g.pid, v_from, v_to,
                   sg.base_offset, sg.end_offset, sg.created_at, sg.blob
              FROM queen.log_segments sg
             WHERE sg.partition_id = g.pid
               AND sg.base_offset >= coalesce((SELECT s2.base_offset FROM queen.log_segments s2
                                               WHERE s2.partition_id = g.pid AND s2.base_offset <= v_from
                                               ORDER BY s2.base_offset DESC LIMIT 1), v_from)
               AND sg.base_offset <= v_to AND sg.end_offset >= v_from
             ORDER BY sg.base_offset;
          IF FOUND THEN CONTINUE groups; END IF;
        END IF;
        FOREACH k IN ARRAY v_pend LOOP
          IF v_o[k] IS NULL THEN v_err[k] := 'Message not found'; END IF;
        END LOOP;
      END IF;
    END IF;

    -- The cursor move: highest completed, clamped below the lowest non-completed signal F.
    v_c := NULL; v_f := NULL; v_fk := NULL; v_fstatus := NULL;
    FOREACH k IN ARRAY v_ks LOOP
      CONTINUE WHEN v_err[k] IS NOT NULL OR v_o[k] <= c.committed;
      IF p_statuses[k] = 'completed' THEN
        v_c := greatest(v_c, v_o[k]);
      ELSIF v_f IS NULL OR v_o[k] < v_f
            OR (v_o[k] = v_f AND (CASE p_statuses[k] WHEN 'dlq' THEN 3 WHEN 'failed' THEN 2 ELSE 1 END)
                               > (CASE v_fstatus WHEN 'dlq' THEN 3 WHEN 'failed' THEN 2 ELSE 1 END)) THEN
        v_f := v_o[k]; v_fk := k; v_fstatus := p_statuses[k];
      END IF;
    END LOOP;
    IF v_f IS NOT NULL THEN v_c := least(v_c, v_f - 1); END IF;
    v_new := greatest(c.committed, v_c);
    v_count := CASE WHEN c.retry_offset IS NOT NULL AND v_new < c.retry_offset THEN c.batch_retry_count ELSE 0 END;
    v_retry_offset := CASE WHEN v_count = 0 THEN NULL ELSE c.retry_offset END;
    v_rnb := c.retry_not_before;
    v_release := false; v_move := false; v_dlq := false; v_skip := false;
    IF v_f IS NOT NULL THEN
      IF v_fstatus = 'retry' THEN
        v_new := greatest(v_new, v_f - 1);
        v_release := true;
        v_rnb := NULL;
      ELSIF v_fstatus = 'failed' AND v_count + 1 <= pq.retry_limit THEN
        v_count := v_count + 1;
        v_retry_offset := v_f;
        v_new := greatest(v_new, v_f - 1);
        v_release := true;
        v_rnb := CASE WHEN pq.retry_delay > 0 THEN v_now + make_interval(secs => pq.retry_delay / 1000.0) END;
      ELSE
        IF v_fstatus = 'failed' THEN v_count := v_count + 1; END IF;
        v_move := true;
      END IF;
    END IF;

    EXIT attempt WHEN NOT v_probe
      OR (v_move AND pq.has_dlq AND EXISTS (
            SELECT 1 FROM queen.log_segments sg
             WHERE sg.partition_id = g.pid AND sg.base_offset <= v_f AND sg.end_offset >= v_f));
    v_probe := false;
    END LOOP;

    IF v_move THEN
      IF pq.has_dlq THEN
        j := (SELECT s.j FROM generate_subscripts(f_partitions, 1) AS s(j)
               WHERE f_partitions[s.j] = g.pid AND f_offsets[s.j] = v_f LIMIT 1);
        IF j IS NULL THEN
          RETURN QUERY
            SELECT NULL::INT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::BOOLEAN,
                   NULL::BOOLEAN, NULL::BOOLEAN, NULL::BIGINT, 'frame', g.pid, v_f, v_f,
                   sg.base_offset, sg.end_offset, sg.created_at, sg.blob
              FROM queen.log_segments sg
             WHERE sg.partition_id = g.pid AND sg.base_offset <= v_f AND sg.end_offset >= v_f
             ORDER BY sg.base_offset DESC LIMIT 1;
          -- Retention took the segment: nothing to copy, so the message is skipped past.
          IF FOUND THEN CONTINUE groups; END IF;
          v_skip := true;
        ELSE
          INSERT INTO queen.log_dlq (partition_id, consumer_group, msg_offset, message_id, transaction_id, trace_id,
                                     producer_sub, payload, encrypted, error_message, retry_count, created_at, failed_at)
          VALUES (g.pid, g.grp, v_f, f_message_ids[j], f_txns[j], f_traces[j], f_subs[j], f_payloads[j],
                  f_encrypted[j], p_errors[v_fk], v_count, f_created[j], clock_timestamp())
          ON CONFLICT (partition_id, consumer_group, msg_offset) DO UPDATE
            SET error_message = EXCLUDED.error_message, retry_count = EXCLUDED.retry_count,
                failed_at = EXCLUDED.failed_at;
          v_dlq := true;
        END IF;
      ELSE
        v_skip := true;
      END IF;
      v_new := greatest(v_new, v_f);
      v_count := 0;
      v_retry_offset := NULL;
    END IF;

    v_released := c.batch_end IS NOT NULL AND (v_release OR v_new >= c.batch_end);
    IF v_new > c.committed OR v_released OR v_count IS DISTINCT FROM c.batch_retry_count
       OR v_rnb IS DISTINCT FROM c.retry_not_before THEN
      UPDATE queen.log_consumers lc
         SET committed = v_new,
             -- A retention gap the cursor jumps was deleted, not consumed.
             total_consumed = lc.total_consumed + greatest(v_new - greatest(c.committed, pq.log_start - 1), 0),
             batch_end = CASE WHEN v_released THEN NULL ELSE lc.batch_end END,
             worker_id = CASE WHEN v_released THEN NULL ELSE lc.worker_id END,
             lease_expires_at = CASE WHEN v_released THEN NULL ELSE lc.lease_expires_at END,
             batch_retry_count = v_count,
             retry_offset = v_retry_offset,
             retry_not_before = v_rnb,
             pending = v_new < (SELECT lp.last_offset FROM queen.log_partitions lp WHERE lp.id = g.pid)
       WHERE lc.partition_id = g.pid AND lc.consumer_group = g.grp;
    END IF;

    RETURN QUERY
      SELECT p_idx[x.k], v_err[x.k] IS NULL, v_err[x.k], pq.qname, pq.pname, v_released,
             v_err[x.k] IS NULL AND v_dlq AND v_o[x.k] = v_f AND p_statuses[x.k] <> 'completed',
             v_err[x.k] IS NULL AND v_skip AND v_o[x.k] = v_f AND p_statuses[x.k] <> 'completed',
             v_err[x.k] IS NULL AND v_o[x.k] <= v_new, v_o[x.k],
             NULL::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT,
             NULL::TIMESTAMPTZ, NULL::BYTEA
        FROM unnest(v_ks) AS x(k);
  END LOOP;
END
$$;
--> statement-breakpoint
-- Lease extend (SPEC §3.4): expiry = max(current, now + seconds) on every live lease with this id.
-- worker_id has no index on purpose (every pop rewrites it; an index would make those updates
-- non-HOT); extend is a rare call and scans the tenant's cursors.
CREATE OR REPLACE FUNCTION queen.extend_lease(p_tenant TEXT, p_lease TEXT, p_seconds INT)
RETURNS TABLE (live INT, expired INT, expires_at TIMESTAMPTZ)
LANGUAGE sql
AS $$
  WITH mine AS (
    SELECT lc.partition_id, lc.consumer_group, lc.lease_expires_at > now() AS live
      FROM queen.log_consumers lc
      JOIN queen.log_partitions lp ON lp.id = lc.partition_id
      JOIN queen.queues q ON q.id = lp.queue_id
     WHERE lc.worker_id = p_lease AND lc.batch_end IS NOT NULL AND q.tenant_id = p_tenant
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
$$;
