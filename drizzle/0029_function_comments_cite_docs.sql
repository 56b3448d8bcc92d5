-- Written by `npm run db:migration` from sql/functions/: read the change there.
COMMENT ON FUNCTION queen.ack(text,integer[],bigint[],text[],bytea[],bigint[],text[],text[],text[],text[],bigint[],bigint[],uuid[],text[],uuid[],text[],bytea[],boolean[],timestamp with time zone[]) IS 'Ack, one call for any number of items (docs/semantics.md#acks, docs/semantics.md#transactions):
queen.ack_cursor for each cursor (partition, group) of the items, in (partition, group) order, so
two acks lock cursors in the same order (docs/locking.md). p_required_leases: a transaction''s
leases, for its acks that carry no leaseId.';
--> statement-breakpoint
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
        ELSIF p_offsets[k] >= part.txns_start AND p_hashes[k] IS NOT NULL AND NOT coalesce((
                SELECT t.end_offset >= p_offsets[k]
                       AND substring(t.hashes FROM (p_offsets[k] - t.base_offset)::INT * 16 + 1 FOR 16) = p_hashes[k]
                  FROM queen.log_txns t
                 WHERE t.partition_id = p_partition AND t.base_offset <= p_offsets[k]
                 ORDER BY t.base_offset DESC LIMIT 1), false) THEN
          v_error[k] := 'Message not found';
        ELSE
          v_offset[k] := p_offsets[k];
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
COMMENT ON FUNCTION queen.ack_cursor(text,bigint,text,integer[],bytea[],bigint[],text[],text[],text[],text[],bigint[],bigint[],uuid[],text[],uuid[],text[],bytea[],boolean[],timestamp with time zone[]) IS 'The items of one cursor (partition p_partition, group p_group), numbered 1..n here; p_idx maps
them back to the request. Locks the cursor, authorises each item, resolves transactionId ->
offset, then moves the cursor once: highest completed offset clamped below the lowest
non-completed signal F (dlq > failed > retry at equal offsets), then applies F.

Authorisation: an item''s leaseId, or (a transaction''s ack without one) the live lease when it is
in p_required_leases, must be the live lease; then the item may resolve in (committed,
batch_end]. No lease at all: allowed while no lease is live, over (committed, last_offset].
Whatever the lease, an item at or below the cursor is a no-op success (already_committed): a
retried ack whose answer was lost. A refused item gets its refusal only if it is not found there.

Two things SQL cannot do alone, answered with `need` rows instead of results (nothing of the
cursor is written; the broker calls again with what was asked for):
  ''decode'' the hashes of need_items are below txns_start (purged): these segments must be searched
  ''frame''  the cursor dead-letters offset F: the frame at F, decoded, goes into log_dlq
The second call recomputes everything under the cursor lock, so the DLQ copy and the cursor move
commit together and only if the recomputation still dead-letters that same offset.

attempt (what pop reports): a delivery whose first message was in the previous delivery to the
group is that delivery''s attempt + 1, any other delivery is 1. pop_claim compares its start with
attempt_offset; this function keeps attempt_offset on the first message still unacked of the
last lease, so a partial ack, a nack or a DLQ move followed by a redelivery counts it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.extend_lease(text,text,integer) IS 'Lease extend (docs/semantics.md#lease-extend): expiry = max(current, now + seconds) on every live
lease with this id. worker_id has no index on purpose (every pop rewrites it; an index would make
those updates non-HOT); extend is a rare call and scans the tenant''s cursors.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.offset_at_time(bigint,timestamp with time zone) IS 'The first offset whose segment was created at or after p_ts, or last_offset + 1. created_at is
monotone in base_offset (docs/storage.md#monotone-creation-times), so "created_at of the first
segment at or after x" is monotone in x and a binary search of forward steps on the primary key
finds it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.seek_consumer_group(text,text,text,boolean,timestamp with time zone,text,bigint) IS 'Moves one group''s cursors on a queue (docs/semantics.md#consumer-groups-and-seek): to the end, to
a timestamp, or to an offset of one partition. Creates missing cursor rows, clears leases and
resets retry/attempt counters. Returns NULL when the queue does not exist, ''[]'' when the named
partition does not.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.group_partitions(text,text,text) IS 'One row per (group, partition) of the tenant''s queues. Lag is last_offset - max(committed,
log_start - 1) (docs/semantics.md#retention); oldest is the creation time of the segment holding
the next wanted offset, age its age in whole seconds (0 when caught up).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.stats_window(timestamp with time zone,timestamp with time zone,interval) IS 'The window of a time-series route: [from, to), to defaulting to now and from to `p_default`
before to.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_queue_lag(text,timestamp with time zone,timestamp with time zone,text) IS 'GET /api/v1/analytics/queue-lag (get_queue_lag_v1): a bare array, per queue and minute, newest
first.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_queue_ops(text,timestamp with time zone,timestamp with time zone,text) IS 'GET /api/v1/analytics/queue-ops (get_queue_ops_v1): per queue and bucket, oldest first.
ackSuccess is what the cursors advanced (completed acks, autoAck pops, dead-lettered skips).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_retention(text,timestamp with time zone,timestamp with time zone,text) IS 'GET /api/v1/analytics/retention (get_retention_timeseries_v1): buckets with deletions, oldest
first. eventCount counts partitions retained.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_worker_metrics(text,timestamp with time zone,timestamp with time zone) IS 'GET /api/v1/analytics/worker-metrics (get_worker_metrics_timeseries_v1): the tenant-wide series
in Queen''s worker shape, with every per-worker and per-request figure null and no workers.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.txn_key(bigint,bytea) IS 'A message''s dedup key: its hash''s first 64 bits XOR the partition id, an int8. The GIN index holds
8 bytes a message where a (partition || hash) bytea took 24 (75 of the 151 bytes a message cost
at batch 100), and compares integers; a match is still decided on the full 128-bit hash in the
sidecar row, so a false match costs a row read, never a wrong answer.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.find_txn_offsets(bigint,bytea[],bigint,bigint) IS 'Every offset in [p_from, p_to] of the partition whose sidecar hash is one of p_hashes, through
the dedup GIN index (docs/storage.md#the-duplicate-probe). The one place an ack by transactionId
reads that index, never the whole partition (docs/storage.md#how-an-ack-finds-its-message): the
cost follows the rows holding a key, not the length of the range. EXECUTE plans it with the
values: a cached generic plan would rather walk the range on the primary key and compute every
row''s keys.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_offset(bigint,bytea,text) IS 'The offset of a transactionId in a partition, for a trace: the lowest live offset whose sidecar
hash matches (through the dedup GIN index), else the lowest DLQ copy; NULL when neither knows it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.bucket_minutes(timestamp with time zone,timestamp with time zone) IS 'Bucket width from the window, as Queen chooses it: up to 1 h 1 min, 6 h 5 min, 24 h 15 min, 7 d
60 min, else 6 h.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.bucket_start(timestamp with time zone,integer) IS 'Buckets are multiples of their width since the epoch: aligned to the hour, 6-hour ones to
midnight UTC.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_marks(bigint) IS 'The message browser (docs/semantics.md#queens-other-routes: Queen''s GET /api/v1/messages) and the
message-level status the list and the detail share. SQL never decompresses: it picks the segments
a page needs and the broker decodes only those. Where a message''s status changes along a
partition''s offsets, Queen''s rule: the queue-mode cursor decides when the partition has one
(completed up to its cursor, processing up to its live lease''s end); otherwise completed once
every named group has passed it. Offsets above processing_to are pending; a message with any DLQ
row is dead_letter whatever its offset.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.list_messages(text,text,text,text,text,text,timestamp with time zone,timestamp with time zone,integer) IS 'GET /messages: the segments one page needs, newest first, and a ''mode'' row summarising the groups
of every partition with messages in the window: from p_from (default an hour ago) to the end of
p_to''s minute (default now), as Queen rounds it. A partition''s window is the offset range [lo,
hi) of its segments created in it (created_at is monotone in offset,
docs/storage.md#monotone-creation-times), narrowed to [a, b] where the status filter can match.
Per partition at most p_need segments are taken, each holding at least one matching message,
scanning backwards on the primary key; then, across partitions, segments are taken newest first
until p_need matching messages are covered (p_need = offset + limit). Dead letters are found from
their DLQ rows.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.metrics_totals(text) IS '/metrics (JSON): lifetime pushes of the tenant and their rate over the rollup''s last five closed
minutes.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.retry_not_before(timestamp with time zone,integer,integer) IS 'When a failed message may be delivered again (docs/semantics.md#acks): retryDelay (ms) after the
failure, or at once when it is 0. p_retries counts the failures of this offset so far, this one
included (1 on the first), for a back-off that grows.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.retry_allowed(integer,integer) IS 'Whether a message that failed p_retries times before may be retried once more under a queue''s
retryLimit, rather than dead-lettered (docs/semantics.md#acks).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.pop(text,text,text,text,text,text,integer,integer,text,boolean,text,timestamp with time zone,bigint) IS 'The whole pop in one call. Named partition, wildcard (p_partition NULL) or discovery (p_queue
NULL: every queue of the tenant matching namespace/task). Returns the claimed partitions'' whole
segment rows in claim order; the broker decodes and slices [from_offset, batch_end]. A named pop
finds its queue with one index probe; ensure_queue runs only when the queue does not exist yet.

The wildcard scan (docs/locking.md#the-wildcard-scan,
docs/semantics.md#wildcard-and-discovery-pops), never the whole queue: a pop''s cost is bounded by
the partitions written since the group last looked plus the cursors it walks before its batch is
full. Phase 1 marks every partition written since the group''s scan mark that the group has not
seen (a new cursor, or pending = true), so an old backlog stays findable however long the group
stays away; phase 2 walks the group''s pending cursors least recently served first, in index
order, and stops once the batch is full. The scan mark is the start of the oldest transaction
open when the scan began: a write this scan cannot see belongs to a transaction that started
after it, and its partition''s last_write_at (push keeps it within a second of its transaction''s
start) is at or after it. The mark never lags more than two minutes: the oldest open transaction
may belong to anyone, and no push statement runs that long. The mark reads pg_stat_activity only
when it could move (about once a second per group). A new group starts with no mark: its first
wildcard pop visits the queue once (from the beginning) or the partitions written since it
subscribed (`new`, timestamp).

Waits: the cursor inserts of phase 1 run in partition order, every other lock a pop takes is
SKIP LOCKED, so two pops never wait on each other in a cycle. pop_claim inherits this function''s
enable_seqscan = off and is called as a plpgsql expression (no executor start per claim).';
--> statement-breakpoint
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
--> statement-breakpoint
COMMENT ON FUNCTION queen.ensure_partition(bigint,text) IS 'A partition named on first use. Race-safe: the loser of a concurrent insert reads the winner''s
row.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.queue_options(queen.queues) IS 'Every docs/semantics.md#configure option of a queue row, as the wire names them.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.configure_queue(text,text,text,text,jsonb) IS 'Upsert with merge semantics: a sent option overwrites, an omitted one keeps its stored value, or
takes the default when this call creates the queue (leaseTime 300 there,
docs/semantics.md#configure).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.delete_queue(text,text) IS 'log_txns has no foreign key (docs/storage.md#the-sidecar), so its rows go explicitly. The queue
row is locked first so no partition can be created under it while the cascade runs.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.list_queues(text,text,text) IS 'GET /resources/queues: Queen''s messages {total, pending, processing} (pending without in-flight),
plus completed.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.group_positions(bigint[]) IS 'Every (partition, consumer group) position on the given queues: the cursor rows, plus each
subscribed group on the partitions it has no cursor on yet, placed where its first pop would
start (docs/semantics.md#pop-and-leases). Lag is last_offset - max(committed, log_start - 1):
gaps are not lag (docs/semantics.md#retention). `since` is when the oldest message it has not
consumed was pushed (the segment holding its next wanted offset: one backward step on the primary
key, inline, as a function call costs several times the probe), NULL when it has nothing to
consume.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.partition_figures(text,text) IS 'Queue resources with Queen''s figures (docs/semantics.md#consumer-groups-and-seek,
docs/semantics.md#queens-other-routes): per partition, the messages held and how they split
between done, in flight and pending; the overview. All computed from the log per call. done: the
held offsets every group with a cursor has committed past; processing: the largest live lease on
the partition, within what is not done; pending: the rest. total = completed + processing +
pending; deadLetter counts the partition''s DLQ rows (a dead letter is also done).

Per partition, now: held messages; the lag of its slowest position (every held message when
nobody reads it), split into leased (processing) and the rest (pending); dead letters; lifetime
pushes; the cursors'' lifetime consumption; over its lagging positions their summed lag, count,
oldest unconsumed time and the sum of those times (for a mean); and the last delivery.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.partition_figures(bigint[]) IS 'Queue resources with Queen''s figures (docs/semantics.md#consumer-groups-and-seek,
docs/semantics.md#queens-other-routes): per partition, the messages held and how they split
between done, in flight and pending; the overview. All computed from the log per call. done: the
held offsets every group with a cursor has committed past; processing: the largest live lease on
the partition, within what is not done; pending: the rest. total = completed + processing +
pending; deadLetter counts the partition''s DLQ rows (a dead letter is also done).

Per partition, now: held messages; the lag of its slowest position (every held message when
nobody reads it), split into leased (processing) and the rest (pending); dead letters; lifetime
pushes; the cursors'' lifetime consumption; over its lagging positions their summed lag, count,
oldest unconsumed time and the sum of those times (for a mean); and the last delivery.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.retain_partition(bigint,integer) IS 'Retention of one partition, in its own short transaction (docs/semantics.md#retention): deletes
the longest prefix of whole segments that time retention or completed retention allows, at most
p_max_segments of them (`more` says a further call has work), and purges the sidecar on its own
clock. log_start moves to the first surviving segment (docs/storage.md#the-retention-watermark),
txns_start likewise; both in one UPDATE at the end, so the partition row (the push serializer) is
locked only until commit. Completed retention keeps every segment some subscribed group has not
committed past, and the whole partition while a subscribed group has no cursor on it. A
concurrent run holding the partition''s advisory lock makes this one skip it. Queen''s
maxWaitTimeSeconds evicts what waited longer than that, consumed or not: here the prefix of
segments older than it goes. A segment counts for time retention when that rule allows it, else
for completed retention when every subscribed group is past it, else for eviction.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.record_retention(bigint[],bigint[],bigint[],bigint[],integer[]) IS 'What one retention run deleted per queue, by rule, added to the current minute.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.rollup_minute_stats(interval) IS 'The per-minute rollup (run by the retention cron, before retention deletes what it counts).
Closed minutes since the last run (plus three, for pushes that committed late) are recomputed
from the log: pushes from segment created_at (monotone in base_offset,
docs/storage.md#monotone-creation-times, so one range scan per recently written partition),
partitions from created_at, dead letters from failed_at. GREATEST keeps a count that retention, a
DLQ retry or delete lowered since. Then each queue''s gauges are sampled into the current minute
when they changed (or every six hours while it has partitions), and rows older than p_keep go.
Overlapping runs skip, and so does a run that races a queue''s deletion.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_traces_of(text,bigint,text) IS 'GET /traces/:partitionId/:transactionId: oldest first; [] for an unknown or another tenant''s
partition.';
