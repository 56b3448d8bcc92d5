-- Written by `npm run db:migration` from sql/functions/: read the change there.
-- The items of one cursor (partition p_partition, group p_group), numbered 1..n here; p_idx maps
-- them back to the request. Locks the cursor, authorises each item, resolves transactionId ->
-- offset, then moves the cursor once: highest completed offset clamped below the lowest
-- non-completed signal F (dlq > failed > retry at equal offsets), then applies F.
--
-- Authorisation: an item's leaseId, or (a transaction's ack without one) the live lease when it is
-- in p_required_leases, must be the live lease; then the item may resolve in (committed,
-- batch_end]. No lease at all: allowed while no lease is live, over (committed, last_offset].
-- Whatever the lease, an item at or below the cursor is a no-op success (already_committed): a
-- retried ack whose answer was lost. A refused item gets its refusal only if it is not found there.
--
-- Two things SQL cannot do alone, answered with `need` rows instead of results (nothing of the
-- cursor is written; the broker calls again with what was asked for):
--   'decode' the hashes of need_items are below txns_start (purged): these segments must be searched
--   'frame'  the cursor dead-letters offset F: the frame at F, decoded, goes into log_dlq
-- The second call recomputes everything under the cursor lock, so the DLQ copy and the cursor move
-- commit together and only if the recomputation still dead-letters that same offset.
--
-- attempt (what pop reports): a delivery whose first message was in the previous delivery to the
-- group is that delivery's attempt + 1, any other delivery is 1. pop_claim compares its start with
-- attempt_offset; this function keeps attempt_offset on the first message still unacked of the
-- last lease, so a partial ack, a nack or a DLQ move followed by a redelivery counts it.
CREATE OR REPLACE FUNCTION queen.ack_cursor(p_tenant text, p_partition bigint, p_group text, p_idx integer[], p_hashes bytea[], p_offsets bigint[], p_statuses text[], p_leases text[], p_errors text[], p_required_leases text[], f_partitions bigint[], f_offsets bigint[], f_message_ids uuid[], f_txns text[], f_traces uuid[], f_subs text[], f_payloads bytea[], f_encrypted boolean[], f_created timestamp with time zone[])
 RETURNS SETOF queen.ack_row
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET jit TO 'off'
AS $function$
DECLARE
  n INT := coalesce(cardinality(p_idx), 0);
  v_now TIMESTAMPTZ := now();
  part RECORD;
  cur queen.log_consumers;
  k INT;
  j INT;
  v_offset BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  v_until BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  v_error TEXT[] := array_fill(NULL::TEXT, ARRAY[n]);
  v_refusal TEXT[] := array_fill(NULL::TEXT, ARRAY[n]);
  v_lease TEXT;
  v_lease_live BOOLEAN;
  v_probing BOOLEAN;
  v_pending INT[];
  v_search_from BIGINT;
  v_search_to BIGINT;
  v_found_items INT[];
  v_found_offsets BIGINT[];
  v_completed BIGINT;
  v_signal BIGINT;
  v_signal_item INT;
  v_signal_status TEXT;
  v_committed BIGINT;
  v_retry_count INT;
  v_retry_offset BIGINT;
  v_retry_not_before TIMESTAMPTZ;
  v_dead_letter BOOLEAN;
  v_dlq_written BOOLEAN;
  v_skipped BOOLEAN;
  v_released BOOLEAN;
  v_span BYTEA;
  v_span_lo BIGINT;
  v_span_hi BIGINT;
  v_span_items INT;
BEGIN
  SELECT lp.id, lp.name AS pname, lp.last_offset, lp.log_start, lp.txns_start, qq.id AS qid, qq.name AS qname,
         qq.retry_limit, qq.retry_delay, qq.dead_letter_queue AND qq.dlq_after_max_retries AS has_dlq
    INTO part
    FROM queen.log_partitions lp JOIN queen.queues qq ON qq.id = lp.queue_id
   WHERE lp.id = p_partition AND qq.tenant_id = p_tenant;
  IF NOT FOUND THEN
    RETURN QUERY SELECT p_idx[x.k], false, 'Message not found', NULL::TEXT, NULL::TEXT, false, false, false,
                        false, false, NULL::BIGINT, NULL::TEXT, NULL::BIGINT, NULL::INT[], NULL::BIGINT,
                        NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::BYTEA
                   FROM generate_series(1, n) AS x(k);
    RETURN;
  END IF;

  -- A failed/dlq ack may end in a dead-letter move that needs the frame first. The first pass looks
  -- without locking, so a call that only asks for the frame writes nothing (no commit flush); the
  -- second pass recomputes everything under the lock.
  v_probing := f_partitions IS NULL AND p_statuses && ARRAY['failed', 'dlq'];
  <<pass>>
  LOOP
    IF v_probing THEN
      SELECT * INTO cur FROM queen.log_consumers lc WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
      IF NOT FOUND THEN
        v_probing := false;
        CONTINUE pass;
      END IF;
    ELSE
      SELECT * INTO cur FROM queen.log_consumers lc
       WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO queen.log_consumers (partition_id, consumer_group, queue_id, committed, pending)
        VALUES (p_partition, p_group, part.qid, queen.cursor_start(p_partition, (
                  SELECT cs.start_at FROM queen.consumer_subscriptions cs
                   WHERE cs.queue_id = part.qid AND cs.consumer_group = p_group)), true)
        ON CONFLICT DO NOTHING;
        SELECT * INTO cur FROM queen.log_consumers lc
         WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group FOR UPDATE;
      END IF;
    END IF;
    v_lease_live := cur.batch_end IS NOT NULL AND cur.lease_expires_at > v_now;

    -- Offsets the pop returned, checked against the sidecar: one read of the range they span
    -- instead of one lookup each (a batch acked as delivered spans about itself), when that
    -- range is not much longer than the request.
    v_span_lo := NULL; v_span_hi := NULL; v_span_items := 0;
    FOR k IN 1 .. n LOOP
      IF p_offsets[k] > cur.committed AND p_offsets[k] >= part.txns_start AND p_offsets[k] <= part.last_offset
         AND p_hashes[k] IS NOT NULL THEN
        v_span_lo := least(v_span_lo, p_offsets[k]);
        v_span_hi := greatest(v_span_hi, p_offsets[k]);
        v_span_items := v_span_items + 1;
      END IF;
    END LOOP;
    v_span := CASE WHEN v_span_items > 1 AND v_span_hi - v_span_lo < 4 * v_span_items
                   THEN queen.txn_hash_span(p_partition, v_span_lo, v_span_hi) END;
    IF v_span IS NULL THEN v_span_lo := NULL; END IF;

    FOR k IN 1 .. n LOOP
      v_offset[k] := NULL; v_until[k] := NULL; v_error[k] := NULL; v_refusal[k] := NULL;
      v_lease := coalesce(p_leases[k], CASE WHEN v_lease_live AND cur.worker_id = ANY (p_required_leases) THEN cur.worker_id END);
      IF v_lease IS NOT NULL THEN
        IF v_lease_live AND cur.worker_id = v_lease THEN
          v_until[k] := cur.batch_end;
        ELSE
          v_refusal[k] := 'Invalid or expired lease';
        END IF;
      ELSIF v_lease_live THEN
        v_refusal[k] := 'Another consumer holds the lease on this partition; ack with the leaseId the pop returned';
      ELSE
        v_until[k] := part.last_offset;
      END IF;
      IF p_offsets[k] IS NOT NULL THEN
        IF p_offsets[k] <= cur.committed THEN
          v_offset[k] := p_offsets[k];
        ELSIF v_refusal[k] IS NOT NULL THEN
          v_error[k] := v_refusal[k];
        ELSIF p_offsets[k] > v_until[k] THEN
          v_error[k] := 'Message not found';
        ELSIF p_offsets[k] < part.txns_start OR p_hashes[k] IS NULL THEN
          v_offset[k] := p_offsets[k];
        ELSIF p_offsets[k] BETWEEN v_span_lo AND v_span_hi THEN
          IF substring(v_span FROM (p_offsets[k] - v_span_lo)::INT * 16 + 1 FOR 16) = p_hashes[k] THEN
            v_offset[k] := p_offsets[k];
          ELSE
            v_error[k] := 'Message not found';
          END IF;
        ELSIF coalesce((
                SELECT t.end_offset >= p_offsets[k]
                       AND substring(t.hashes FROM (p_offsets[k] - t.base_offset)::INT * 16 + 1 FOR 16) = p_hashes[k]
                  FROM queen.log_txns t
                 WHERE t.partition_id = p_partition AND t.base_offset <= p_offsets[k]
                 ORDER BY t.base_offset DESC LIMIT 1), false) THEN
          v_offset[k] := p_offsets[k];
        ELSE
          v_error[k] := 'Message not found';
        END IF;
      ELSIF p_hashes[k] IS NULL THEN
        v_error[k] := coalesce(v_refusal[k], 'Message not found');
      END IF;
    END LOOP;

    -- transactionId -> offset over each authorised item's range (committed, v_until], lowest match.
    v_pending := ARRAY(SELECT x.k FROM generate_series(1, n) AS x(k)
                        WHERE v_error[x.k] IS NULL AND v_offset[x.k] IS NULL AND v_refusal[x.k] IS NULL);
    IF cardinality(v_pending) > 0 THEN
      SELECT array_agg(v_pending[r.item]), array_agg(r.msg_offset) INTO v_found_items, v_found_offsets
        FROM queen.resolve_txn_offsets(
               p_partition, ARRAY(SELECT p_hashes[x.k] FROM unnest(v_pending) WITH ORDINALITY AS x(k, pos) ORDER BY x.pos),
               greatest(cur.committed + 1, part.txns_start),
               ARRAY(SELECT v_until[x.k] FROM unnest(v_pending) WITH ORDINALITY AS x(k, pos) ORDER BY x.pos)) AS r;
      FOR j IN 1 .. coalesce(cardinality(v_found_items), 0) LOOP
        v_offset[v_found_items[j]] := v_found_offsets[j];
      END LOOP;
    END IF;

    -- Not after the cursor (or not allowed there): at or below it is the no-op success, looked up
    -- only for these few ids, and only in the sidecar rows still kept.
    v_pending := ARRAY(SELECT x.k FROM generate_series(1, n) AS x(k) WHERE v_error[x.k] IS NULL AND v_offset[x.k] IS NULL);
    IF cardinality(v_pending) > 0 AND cur.committed >= part.txns_start THEN
      SELECT array_agg(r.k), array_agg(r.o) INTO v_found_items, v_found_offsets FROM (
        SELECT x.k, max(f.msg_offset) AS o
          FROM unnest(v_pending) AS x(k)
          JOIN queen.find_txn_offsets(p_partition, ARRAY(SELECT p_hashes[y.k] FROM unnest(v_pending) AS y(k)),
                                      part.txns_start, cur.committed) AS f
            ON f.hash = p_hashes[x.k]
         GROUP BY x.k
      ) AS r;
      FOR j IN 1 .. coalesce(cardinality(v_found_items), 0) LOOP
        v_offset[v_found_items[j]] := v_found_offsets[j];
      END LOOP;
    END IF;

    FOR k IN 1 .. n LOOP
      IF v_offset[k] IS NULL AND v_error[k] IS NULL THEN v_error[k] := v_refusal[k]; END IF;
    END LOOP;
    v_pending := ARRAY(SELECT x.k FROM generate_series(1, n) AS x(k) WHERE v_error[x.k] IS NULL AND v_offset[x.k] IS NULL);
    IF cardinality(v_pending) > 0 THEN
      -- Live segments whose sidecar rows were purged: [max(committed + 1, log_start), txns_start).
      -- Empty when retention took them too: then the id is not there to find.
      v_search_from := greatest(cur.committed + 1, part.log_start);
      v_search_to := least((SELECT max(v_until[x.k]) FROM unnest(v_pending) AS x(k)), part.txns_start - 1);
      IF v_search_from <= v_search_to THEN
        RETURN QUERY
          SELECT NULL::INT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::BOOLEAN,
                 NULL::BOOLEAN, NULL::BOOLEAN, NULL::BOOLEAN, NULL::BIGINT, 'decode', p_partition,
                 ARRAY(SELECT p_idx[x.k] FROM unnest(v_pending) AS x(k)), v_search_from, v_search_to,
                 sg.base_offset, sg.end_offset, sg.created_at, sg.blob
            FROM queen.log_segments sg
           WHERE sg.partition_id = p_partition
             AND sg.base_offset >= coalesce((SELECT s2.base_offset FROM queen.log_segments s2
                                             WHERE s2.partition_id = p_partition AND s2.base_offset <= v_search_from
                                             ORDER BY s2.base_offset DESC LIMIT 1), v_search_from)
             AND sg.base_offset <= v_search_to AND sg.end_offset >= v_search_from
           ORDER BY sg.base_offset;
        IF FOUND THEN RETURN; END IF;
      END IF;
      FOREACH k IN ARRAY v_pending LOOP
        v_error[k] := 'Message not found';
      END LOOP;
    END IF;

    -- The cursor move: highest completed, clamped below the lowest non-completed signal.
    v_completed := NULL; v_signal := NULL; v_signal_item := NULL; v_signal_status := NULL;
    FOR k IN 1 .. n LOOP
      CONTINUE WHEN v_error[k] IS NOT NULL OR v_offset[k] <= cur.committed;
      IF p_statuses[k] = 'completed' THEN
        v_completed := greatest(v_completed, v_offset[k]);
      ELSIF v_signal IS NULL OR v_offset[k] < v_signal
            OR (v_offset[k] = v_signal AND (CASE p_statuses[k] WHEN 'dlq' THEN 3 WHEN 'failed' THEN 2 ELSE 1 END)
                                         > (CASE v_signal_status WHEN 'dlq' THEN 3 WHEN 'failed' THEN 2 ELSE 1 END)) THEN
        v_signal := v_offset[k]; v_signal_item := k; v_signal_status := p_statuses[k];
      END IF;
    END LOOP;
    IF v_signal IS NOT NULL THEN v_completed := least(v_completed, v_signal - 1); END IF;
    v_committed := greatest(cur.committed, v_completed);
    v_retry_count := CASE WHEN cur.retry_offset IS NOT NULL AND v_committed < cur.retry_offset THEN cur.batch_retry_count ELSE 0 END;
    v_retry_offset := CASE WHEN v_retry_count = 0 THEN NULL ELSE cur.retry_offset END;
    v_retry_not_before := cur.retry_not_before;
    v_dead_letter := false;
    IF v_signal_status = 'retry' THEN
      v_committed := greatest(v_committed, v_signal - 1);
      v_retry_not_before := NULL;
    ELSIF v_signal_status = 'failed' AND queen.retry_allowed(v_retry_count, part.retry_limit) THEN
      v_retry_count := v_retry_count + 1;
      v_retry_offset := v_signal;
      v_committed := greatest(v_committed, v_signal - 1);
      v_retry_not_before := queen.retry_not_before(v_now, part.retry_delay, v_retry_count);
    ELSIF v_signal IS NOT NULL THEN
      IF v_signal_status = 'failed' THEN v_retry_count := v_retry_count + 1; END IF;
      v_dead_letter := true;
    END IF;

    j := NULL;
    IF v_dead_letter AND part.has_dlq THEN
      j := (SELECT s.j FROM generate_subscripts(f_partitions, 1) AS s(j)
             WHERE f_partitions[s.j] = p_partition AND f_offsets[s.j] = v_signal LIMIT 1);
      IF j IS NULL THEN
        RETURN QUERY
          SELECT NULL::INT, NULL::BOOLEAN, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BOOLEAN, NULL::BOOLEAN,
                 NULL::BOOLEAN, NULL::BOOLEAN, NULL::BOOLEAN, NULL::BIGINT, 'frame', p_partition, NULL::INT[],
                 v_signal, v_signal, sg.base_offset, sg.end_offset, sg.created_at, sg.blob
            FROM queen.log_segments sg
           WHERE sg.partition_id = p_partition AND sg.base_offset <= v_signal AND sg.end_offset >= v_signal
           ORDER BY sg.base_offset DESC LIMIT 1;
        IF FOUND THEN RETURN; END IF;
        -- Retention took the segment: nothing to copy, so the message is skipped past (under the lock).
      END IF;
    END IF;
    EXIT pass WHEN NOT v_probing;
    v_probing := false;
  END LOOP;

  v_dlq_written := false;
  v_skipped := false;
  IF v_dead_letter THEN
    IF j IS NOT NULL THEN
      INSERT INTO queen.log_dlq (partition_id, consumer_group, msg_offset, message_id, transaction_id, trace_id,
                                 producer_sub, payload, encrypted, error_message, retry_count, created_at, failed_at)
      VALUES (p_partition, p_group, v_signal, f_message_ids[j], f_txns[j], f_traces[j], f_subs[j], f_payloads[j],
              f_encrypted[j], p_errors[v_signal_item], v_retry_count, f_created[j], clock_timestamp())
      ON CONFLICT (partition_id, consumer_group, msg_offset) DO UPDATE
        SET error_message = EXCLUDED.error_message, retry_count = EXCLUDED.retry_count,
            failed_at = EXCLUDED.failed_at;
      v_dlq_written := true;
    ELSE
      v_skipped := true;
    END IF;
    v_committed := greatest(v_committed, v_signal);
    v_retry_count := 0;
    v_retry_offset := NULL;
    v_retry_not_before := NULL;
  END IF;

  -- Any signal ends the lease (docs/semantics.md#acks): the messages after it are deliverable at
  -- once (after retry_not_before for a failure), never only when the lease expires.
  v_released := cur.batch_end IS NOT NULL AND (v_signal IS NOT NULL OR v_committed >= cur.batch_end);
  IF v_committed > cur.committed OR v_released OR v_retry_count IS DISTINCT FROM cur.batch_retry_count
     OR v_retry_not_before IS DISTINCT FROM cur.retry_not_before THEN
    UPDATE queen.log_consumers lc
       SET committed = v_committed,
           -- A retention gap the cursor jumps was deleted, not consumed.
           total_consumed = lc.total_consumed + greatest(v_committed - greatest(cur.committed, part.log_start - 1), 0),
           batch_end = CASE WHEN v_released THEN NULL ELSE lc.batch_end END,
           worker_id = CASE WHEN v_released THEN NULL ELSE lc.worker_id END,
           lease_expires_at = CASE WHEN v_released THEN NULL ELSE lc.lease_expires_at END,
           batch_retry_count = v_retry_count,
           retry_offset = v_retry_offset,
           retry_not_before = v_retry_not_before,
           -- The next delivery starts at v_committed + 1: inside the last lease it is a redelivery.
           attempt_offset = CASE WHEN v_committed < cur.batch_end THEN v_committed + 1 ELSE lc.attempt_offset END,
           pending = v_committed < (SELECT lp.last_offset FROM queen.log_partitions lp WHERE lp.id = p_partition)
     WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
  END IF;

  RETURN QUERY
    SELECT p_idx[x.k], v_error[x.k] IS NULL, v_error[x.k], part.qname, part.pname, v_released,
           v_error[x.k] IS NULL AND v_dlq_written AND v_offset[x.k] = v_signal AND p_statuses[x.k] <> 'completed',
           v_error[x.k] IS NULL AND v_skipped AND v_offset[x.k] = v_signal AND p_statuses[x.k] <> 'completed',
           v_error[x.k] IS NULL AND v_offset[x.k] <= v_committed,
           v_error[x.k] IS NULL AND v_offset[x.k] <= cur.committed,
           v_offset[x.k], NULL::TEXT, NULL::BIGINT, NULL::INT[], NULL::BIGINT, NULL::BIGINT, NULL::BIGINT,
           NULL::BIGINT, NULL::TIMESTAMPTZ, NULL::BYTEA
      FROM generate_series(1, n) AS x(k);
END
$function$;
--> statement-breakpoint
-- The sidecar's hashes of offsets [p_from, p_to] of a partition, concatenated in offset order;
-- NULL unless every offset of the range has its hash (a purged or missing row). Callers compare
-- 16-byte slices of it with the hashes a request sends. No SET options: its callers' hold.
CREATE OR REPLACE FUNCTION queen.txn_hash_span(p_partition bigint, p_from bigint, p_to bigint)
 RETURNS bytea
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  v_span BYTEA;
BEGIN
  SELECT string_agg(substring(t.hashes FROM (greatest(t.base_offset, p_from) - t.base_offset)::INT * 16 + 1
                              FOR (least(t.end_offset, p_to) - greatest(t.base_offset, p_from) + 1)::INT * 16),
                    ''::BYTEA ORDER BY t.base_offset)
    INTO v_span
    FROM queen.log_txns t
   WHERE t.partition_id = p_partition
     AND t.base_offset >= coalesce((SELECT t0.base_offset FROM queen.log_txns t0
                                     WHERE t0.partition_id = p_partition AND t0.base_offset <= p_from
                                     ORDER BY t0.base_offset DESC LIMIT 1), p_from)
     AND t.base_offset <= p_to AND t.end_offset >= p_from;
  -- The rows are disjoint and clipped to the range: the full length means every offset is there.
  RETURN CASE WHEN length(v_span) = (p_to - p_from + 1) * 16 THEN v_span END;
END
$function$;
--> statement-breakpoint
COMMENT ON FUNCTION queen.txn_hash_span(bigint,bigint,bigint) IS 'The sidecar''s hashes of offsets [p_from, p_to] of a partition, concatenated in offset order;
NULL unless every offset of the range has its hash (a purged or missing row). Callers compare
16-byte slices of it with the hashes a request sends. No SET options: its callers'' hold.';
--> statement-breakpoint
-- For each hash k of p_hashes, the lowest offset in [p_from, p_until[k]] holding it (item k; none
-- when not found): the ids of an ack, after the cursor. p_from is at or above txns_start: below the
-- watermarks there are only dead index entries, never stepped back through.
CREATE OR REPLACE FUNCTION queen.resolve_txn_offsets(p_partition bigint, p_hashes bytea[], p_from bigint, p_until bigint[])
 RETURNS TABLE(item integer, msg_offset bigint)
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
  n INT := coalesce(cardinality(p_hashes), 0);
  v_to BIGINT := (SELECT max(u.hi) FROM unnest(p_until) AS u(hi));
  v_first_row BIGINT;
BEGIN
  v_first_row := coalesce((SELECT t.base_offset FROM queen.log_txns t
                            WHERE t.partition_id = p_partition AND t.base_offset <= p_from
                            ORDER BY t.base_offset DESC LIMIT 1), p_from);
  -- A batch acked as it was delivered (Queen's clients ack in message order): the request's
  -- hashes, concatenated, are the sidecar's bytes for [p_from, p_from + n). One comparison of two
  -- byte strings maps item k to p_from + k - 1, instead of exploding the rows and joining.
  IF p_from + n - 1 <= v_to
     AND queen.txn_hash_span(p_partition, p_from, p_from + n - 1)
         = (SELECT string_agg(h.h, ''::BYTEA ORDER BY h.k) FROM unnest(p_hashes) WITH ORDINALITY AS h(h, k))
     AND NOT EXISTS (SELECT 1 FROM unnest(p_until) WITH ORDINALITY AS u(hi, k) WHERE p_from + u.k - 1 > u.hi) THEN
    RETURN QUERY SELECT x.k::INT, p_from + x.k - 1 FROM generate_series(1, n) AS x(k);
    RETURN;
  END IF;
  IF v_to - v_first_row + 1 <= 64 * n THEN
    -- The range is about as large as the request (a batch acked by transactionId): explode its
    -- sidecar rows once into (offset, hash) and hash-join the request, linear in both.
    RETURN QUERY
      WITH want AS MATERIALIZED (
        SELECT x.k, p_hashes[x.k] AS h, p_until[x.k] AS hi FROM generate_series(1, n) AS x(k)
      ), cand AS MATERIALIZED (
        SELECT t.base_offset + u.idx AS o, u.h
          FROM queen.log_txns t CROSS JOIN LATERAL queen.log_unnest_hashes(t.hashes) AS u
         WHERE t.partition_id = p_partition AND t.base_offset >= v_first_row AND t.base_offset <= v_to
      )
      SELECT want.k, min(cand.o)
        FROM want JOIN cand ON cand.h = want.h AND cand.o >= p_from AND cand.o <= want.hi
       GROUP BY want.k;
  ELSIF n < 16 THEN
    -- A few ids in a long range: position() finds a 16-byte hash in a sidecar row in C; only a
    -- match that is misaligned or outside the range (a repeated transactionId) explodes the row.
    RETURN QUERY
      WITH want AS (
        SELECT x.k, p_hashes[x.k] AS h, p_until[x.k] AS hi FROM generate_series(1, n) AS x(k)
      ), hit AS (
        SELECT want.k, want.h, want.hi, t.base_offset AS base, t.hashes, position(want.h IN t.hashes) AS pos
          FROM want JOIN queen.log_txns t
            ON t.partition_id = p_partition AND t.base_offset >= v_first_row AND t.base_offset <= want.hi
      )
      SELECT hit.k, min(CASE
               WHEN (hit.pos - 1) % 16 = 0 AND hit.base + (hit.pos - 1) / 16 >= p_from
                    AND hit.base + (hit.pos - 1) / 16 <= hit.hi THEN hit.base + (hit.pos - 1) / 16
               ELSE (SELECT min(hit.base + u.idx) FROM queen.log_unnest_hashes(hit.hashes) AS u
                      WHERE u.h = hit.h AND hit.base + u.idx >= p_from AND hit.base + u.idx <= hit.hi)
             END)
        FROM hit WHERE hit.pos > 0 GROUP BY hit.k;
  ELSE
    -- Many ids in a range far longer than the request (an unleased ack of a cursor far behind):
    -- the index returns only the sidecar rows holding one of the keys.
    RETURN QUERY
      SELECT x.k, min(f.msg_offset)
        FROM generate_series(1, n) AS x(k)
        JOIN queen.find_txn_offsets(p_partition, p_hashes, p_from, v_to) AS f
          ON f.hash = p_hashes[x.k] AND f.msg_offset <= p_until[x.k]
       GROUP BY x.k;
  END IF;
END
$function$;
