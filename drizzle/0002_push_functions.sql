-- The push path: queue/partition provisioning and the one-call segment writer.
--
-- Dedup index (HARD-PARTS §1). Each log_txns row maps to an array of 24-byte keys, the 8-byte
-- partition id followed by one 16-byte hash, in a GIN index; a probe asks `&&` for the request's
-- keys and rechecks only the rows it returns. Its cost follows the number of keys probed, not the
-- size of the window. fastupdate is off: a pending list would be scanned linearly by every probe
-- and flushed inside some unlucky push (bench/push.ts measures both).
CREATE OR REPLACE FUNCTION queen.log_txn_keys(p_partition BIGINT, p_hashes BYTEA)
RETURNS BYTEA[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT ARRAY(
    SELECT int8send(p_partition) || substring(p_hashes FROM i * 16 + 1 FOR 16)
    FROM generate_series(0, length(p_hashes) / 16 - 1) AS i
  )
$$;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS idx_log_txns_keys ON queen.log_txns
  USING gin (queen.log_txn_keys(partition_id, hashes)) WITH (fastupdate = off);
--> statement-breakpoint
-- A queue named on first use, with the defaults of an implicitly created queue (lease 60 s, dedup
-- 3600 s; namespace/task split at the first '.'). Race-safe: the loser of a concurrent insert
-- waits for the winner's commit, then reads its row.
CREATE OR REPLACE FUNCTION queen.ensure_queue(p_tenant TEXT, p_name TEXT)
RETURNS queen.queues
LANGUAGE plpgsql
AS $$
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
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION queen.ensure_partition(p_queue_id BIGINT, p_name TEXT)
RETURNS queen.log_partitions
LANGUAGE plpgsql
AS $$
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
$$;
--> statement-breakpoint
-- The dedup probe: which frames (group g 1-based, frame k 0-based) repeat a hash stored in their
-- partition at or after their group's `since` (NULL: not probed), at which offset (the lowest),
-- in which segment. The GIN index finds the candidate sidecar rows; only those are exploded and
-- compared exactly. The planner cannot estimate `&&` over a hundred fresh keys and would rather
-- seq-scan the window (computing every row's keys), so the scan is pinned to the index here, and
-- only here; array-driven row estimates in the millions would also buy a useless JIT compile.
CREATE OR REPLACE FUNCTION queen.log_probe_hashes(
  p_pids BIGINT[], p_hashes BYTEA[], p_probe_grp INT[], p_probe_item INT[], p_since TIMESTAMPTZ[]
)
RETURNS TABLE (grp INT, item INT, partition_id BIGINT, msg_offset BIGINT, base_offset BIGINT)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET max_parallel_workers_per_gather = 0
SET jit = off
AS $$
BEGIN
  -- plpgsql rather than sql: its plan is cached per session instead of planned on every call.
  RETURN QUERY
    WITH probe AS MATERIALIZED (
      SELECT x.g, x.k, p_pids[x.g] AS pid, substring(p_hashes[x.g] FROM x.k * 16 + 1 FOR 16) AS h, p_since[x.g] AS since
        FROM unnest(p_probe_grp, p_probe_item) AS x(g, k)
       WHERE p_since[x.g] IS NOT NULL
    ), cand AS MATERIALIZED (
      SELECT t.partition_id, t.base_offset, t.created_at, t.hashes
        FROM queen.log_txns t
       WHERE queen.log_txn_keys(t.partition_id, t.hashes) && ARRAY(SELECT int8send(probe.pid) || probe.h FROM probe)
    )
    SELECT DISTINCT ON (probe.g, probe.k) probe.g, probe.k, probe.pid, c.base_offset + u.idx, c.base_offset
      FROM cand c
      CROSS JOIN LATERAL queen.log_unnest_hashes(c.hashes) AS u
      JOIN probe ON probe.pid = c.partition_id AND probe.h = u.h AND c.created_at > probe.since
     ORDER BY probe.g, probe.k, c.base_offset + u.idx;
END
$$;
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
CREATE OR REPLACE FUNCTION queen.push_segments(
  p_tenant TEXT,
  p_queues TEXT[],
  p_partitions TEXT[],
  p_counts INT[],
  p_blob_lens INT[],
  p_blobs BYTEA,
  p_hashes BYTEA,
  p_encrypted BOOLEAN[],
  p_collapsed BOOLEAN[],
  p_probe_grp INT[],
  p_probe_item INT[]
)
RETURNS TABLE (kind TEXT, grp INT, item INT, partition_id BIGINT, msg_offset BIGINT, base_offset BIGINT, blob BYTEA)
LANGUAGE plpgsql
-- Array-driven queries carry row estimates in the millions, which would buy a JIT compile
-- (tens of ms) for a sub-millisecond statement.
SET jit = off
AS $$
DECLARE
  n INT := coalesce(cardinality(p_queues), 0);
  v_pids BIGINT[];
  v_blobs BYTEA[];
  v_hashes BYTEA[];
  v_windows INT[];
  v_encrypt BOOLEAN[];
  v_now TIMESTAMPTZ;
  v_issue BOOLEAN;
  g INT;
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;
  -- Blobs and hashes arrive concatenated: one binary parameter each is far cheaper to send than a
  -- bytea[] (drivers text-encode array elements as hex).
  SELECT array_agg(substring(p_blobs FROM c.blob_end - c.blen + 1 FOR c.blen) ORDER BY c.g),
         array_agg(substring(p_hashes FROM 16 * (c.frame_end - c.cnt) + 1 FOR 16 * c.cnt) ORDER BY c.g)
    INTO v_blobs, v_hashes
    FROM (SELECT u.g, u.cnt, u.blen, (sum(u.cnt) OVER w)::INT AS frame_end, (sum(u.blen) OVER w)::INT AS blob_end
            FROM unnest(p_counts, p_blob_lens) WITH ORDINALITY AS u(cnt, blen, g)
          WINDOW w AS (ORDER BY u.g)) c;

  -- Twice at most: a queue deleted between provisioning and locking is provisioned again.
  FOR attempt IN 1 .. 2 LOOP
    SELECT array_agg(p.id ORDER BY u.g), array_agg(q.dedup_window_seconds ORDER BY u.g),
           array_agg(q.encryption_enabled ORDER BY u.g), count(p.id)
      INTO v_pids, v_windows, v_encrypt, g
      FROM unnest(p_queues, p_partitions) WITH ORDINALITY AS u(qname, pname, g)
      LEFT JOIN queen.queues q ON q.tenant_id = p_tenant AND q.name = u.qname
      LEFT JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = u.pname;
    IF g < n THEN
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

  RETURN QUERY
    SELECT CASE WHEN v_encrypt[i] THEN 'encrypt' ELSE 'plain' END, i - 1, NULL::INT, v_pids[i],
           NULL::BIGINT, NULL::BIGINT, NULL::BYTEA
      FROM generate_series(1, n) AS i
     WHERE v_encrypt[i] IS DISTINCT FROM p_encrypted[i]
    UNION ALL
    SELECT 'expand', i - 1, NULL, v_pids[i], NULL, NULL, NULL
      FROM generate_series(1, n) AS i
     WHERE v_windows[i] = 0 AND p_collapsed[i];
  v_issue := FOUND;

  v_now := clock_timestamp();

  IF cardinality(p_probe_grp) > 0 AND EXISTS (SELECT 1 FROM unnest(v_windows) w WHERE w > 0) THEN
    RETURN QUERY
      WITH dups AS MATERIALIZED (
        SELECT * FROM queen.log_probe_hashes(
          v_pids, v_hashes, ARRAY(SELECT x + 1 FROM unnest(p_probe_grp) AS x), p_probe_item,
          ARRAY(SELECT CASE WHEN w > 0 THEN v_now - make_interval(secs => w) END
                  FROM unnest(v_windows) WITH ORDINALITY AS x(w, o) ORDER BY o))
      )
      SELECT 'dup', d.grp - 1, d.item, d.partition_id, d.msg_offset, d.base_offset, NULL::BYTEA FROM dups d
      UNION ALL
      SELECT 'seg', NULL, NULL, o.partition_id, NULL, o.base_offset,
             (SELECT s.blob FROM queen.log_segments s WHERE s.partition_id = o.partition_id AND s.base_offset = o.base_offset)
        FROM (SELECT DISTINCT d.partition_id, d.base_offset FROM dups d) o;
    v_issue := v_issue OR FOUND;
  END IF;
  IF v_issue THEN
    RETURN;
  END IF;

  RETURN QUERY
    WITH alloc AS (
      UPDATE queen.log_partitions lp
         SET last_offset = lp.last_offset + c.cnt,
             last_write_at = CASE WHEN v_now - lp.last_write_at > interval '1 second' THEN v_now ELSE lp.last_write_at END
        FROM unnest(v_pids, p_counts) AS c(pid, cnt)
       WHERE lp.id = c.pid
      RETURNING lp.id AS pid, lp.last_offset - c.cnt + 1 AS base, lp.last_offset AS last
    ), groups AS (
      SELECT u.g, u.pid, u.blob, u.hashes, a.base, a.last
        FROM unnest(v_pids, v_blobs, v_hashes) WITH ORDINALITY AS u(pid, blob, hashes, g)
        JOIN alloc a ON a.pid = u.pid
    ), seg AS (
      INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
      SELECT gr.pid, gr.base, gr.last, v_now, gr.blob FROM groups gr
    ), txn AS (
      INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
      SELECT gr.pid, gr.base, gr.last, v_now, gr.hashes FROM groups gr
    )
    SELECT 'ok', (gr.g - 1)::INT, NULL::INT, gr.pid, NULL::BIGINT, gr.base, NULL::BYTEA FROM groups gr;
END
$$;
