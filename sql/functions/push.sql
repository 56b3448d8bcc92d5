-- Push: the queue and partition made on first use, and the write of one request's segments.

-- How stale a partition's last_write_at may be: push restamps it only when the stamp is older than
-- this (an indexed column, so a restamping update is not HOT), and every reader that looks for
-- partitions written since an instant subtracts it (the wildcard scan's slack and mark, the
-- delivery sweep). One definition, so the stamp and its readers cannot disagree.
CREATE OR REPLACE FUNCTION queen.write_stamp_quantum()
 RETURNS interval
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT interval '100 milliseconds' $function$;

-- A queue named on first use, with the defaults of an implicitly created queue (lease 60 s, dedup
-- 3600 s; namespace/task split at the first '.'). Race-safe: the loser of a concurrent insert
-- waits for the winner's commit, then reads its row.
CREATE OR REPLACE FUNCTION queen.ensure_queue(p_tenant text, p_name text)
 RETURNS queen.queues
 LANGUAGE plpgsql
AS $function$
DECLARE
  q queen.queues;
  dot INT := strpos(p_name, '.');
BEGIN
  SELECT * INTO q FROM queen.queues WHERE tenant_id = p_tenant AND name = p_name;
  IF FOUND THEN
    RETURN q;
  END IF;
  INSERT INTO queen.queues (tenant_id, name, namespace, task, lease_time, dedup_window_seconds)
  VALUES (
    p_tenant, p_name,
    CASE WHEN dot > 0 THEN nullif(left(p_name, dot - 1), '') END,
    CASE WHEN dot > 0 THEN nullif(substr(p_name, dot + 1), '') END,
    60, 3600
  )
  ON CONFLICT (tenant_id, name) DO NOTHING;
  SELECT * INTO q FROM queen.queues WHERE tenant_id = p_tenant AND name = p_name;
  RETURN q;
END
$function$;

-- A partition named on first use. Race-safe: the loser of a concurrent insert reads the winner's
-- row.
CREATE OR REPLACE FUNCTION queen.ensure_partition(p_queue_id bigint, p_name text)
 RETURNS queen.log_partitions
 LANGUAGE plpgsql
AS $function$
DECLARE
  p queen.log_partitions;
BEGIN
  SELECT * INTO p FROM queen.log_partitions WHERE queue_id = p_queue_id AND name = p_name;
  IF FOUND THEN
    RETURN p;
  END IF;
  INSERT INTO queen.log_partitions (queue_id, name) VALUES (p_queue_id, p_name)
  ON CONFLICT (queue_id, name) DO NOTHING;
  SELECT * INTO p FROM queen.log_partitions WHERE queue_id = p_queue_id AND name = p_name;
  RETURN p;
END
$function$;

-- A previous release's push, during a deploy (docs/operations.md#rolling-back): the same function,
-- the keys computed here.
CREATE OR REPLACE FUNCTION queen.push_segments(p_tenant text, p_queues text[], p_partitions text[], p_counts integer[], p_blob_lens integer[], p_blobs bytea, p_hashes bytea, p_encrypted boolean[], p_collapsed boolean[], p_probe_grp integer[], p_probe_item integer[])
 RETURNS TABLE(kind text, grp integer, item integer, partition_id bigint, msg_offset bigint, base_offset bigint, blob bytea)
 LANGUAGE sql
AS $function$
  SELECT * FROM queen.push_segments(p_tenant, p_queues, p_partitions, p_counts, p_blob_lens, p_blobs, p_hashes, p_encrypted, p_collapsed, p_probe_grp, p_probe_item, NULL::bigint[])
$function$;

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
