-- Push delivery: the dispatcher's claim of due partitions and the settle of one sent batch
-- (docs/delivery.md).

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

-- Settles one sent batch in one statement (docs/delivery.md#the-answer): the ack the endpoint's
-- answer means (queen.ack_cursor, so the ack rules, retry budget and DLQ are the broker's own),
-- the back-off of a failure or a throttle, the outstanding batch kept for a resend or cleared,
-- the attempt's log row, and the subscription's counters and state. Nothing moves when the claim's
-- lease was lost (expired and taken): that batch is sent again under its webhook-id.
CREATE OR REPLACE FUNCTION queen.delivery_settle(p_tenant text, p_subscription uuid, p_group text, p_partition bigint, p_lease text, p_webhook_id text, p_from bigint, p_to bigint, p_attempt integer, p_outcome text, p_retry_ms bigint, p_status integer, p_error text, p_latency_ms integer, p_response text, p_offsets bigint[], p_statuses text[], p_errors text[], f_offsets bigint[], f_message_ids uuid[], f_txns text[], f_traces uuid[], f_subs text[], f_payloads bytea[], f_encrypted boolean[], f_created timestamp with time zone[])
 RETURNS TABLE(outcome text, delivered bigint, dead_lettered integer, paused_reason text, lost boolean)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
  v_now TIMESTAMPTZ := now();
  n INT := coalesce(cardinality(p_offsets), 0);
  s queen.subscriptions;
  r queen.ack_row;
  v_outcome TEXT := p_outcome;
  v_lost BOOLEAN := false;
  v_dead BOOLEAN := false;
  v_dlq INT := 0;
  v_skipped INT := 0;
  v_committed BIGINT;
  v_delivered BIGINT := 0;
  v_keep BOOLEAN;
  v_wait INTERVAL := make_interval(secs => coalesce(p_retry_ms, 0) / 1000.0);
  v_paused TEXT;
BEGIN
  -- The subscription row first (docs/locking.md): claims for it wait, so maxInFlight holds.
  SELECT * INTO s FROM queen.subscriptions sub WHERE sub.id = p_subscription FOR UPDATE;

  IF n > 0 THEN
    FOR r IN
      SELECT * FROM queen.ack_cursor(
        p_tenant, p_partition, p_group, ARRAY(SELECT generate_series(0, n - 1)), array_fill(NULL::BYTEA, ARRAY[n]),
        p_offsets, p_statuses, array_fill(p_lease, ARRAY[n]), p_errors, NULL,
        array_fill(p_partition, ARRAY[coalesce(cardinality(f_offsets), 0)]), f_offsets, f_message_ids, f_txns,
        f_traces, f_subs, f_payloads, f_encrypted, f_created)
    LOOP
      IF r.need IS NOT NULL THEN
        RAISE EXCEPTION 'delivery_settle: ack asked for % of partition % (the frames sent do not cover it)', r.need, p_partition;
      END IF;
      v_lost := v_lost OR NOT r.success;
      v_dead := v_dead OR r.dlq OR r.skipped;
      v_dlq := v_dlq + CASE WHEN r.dlq THEN 1 ELSE 0 END;
      v_skipped := v_skipped + CASE WHEN r.skipped THEN 1 ELSE 0 END;
    END LOOP;
    IF NOT v_lost THEN
      SELECT lc.committed INTO v_committed FROM queen.log_consumers lc
       WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
      v_delivered := greatest(0, least(v_committed, p_to) - p_from + 1 - v_dlq - v_skipped);
      IF p_retry_ms IS NOT NULL AND NOT v_dead THEN
        UPDATE queen.log_consumers lc SET retry_not_before = v_now + v_wait
         WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group;
      END IF;
    END IF;
  ELSE
    -- Throttled or gone: no ack; the lease ends now (after the wait for a throttle).
    UPDATE queen.log_consumers lc
       SET batch_end = NULL, worker_id = NULL, lease_expires_at = NULL,
           retry_not_before = CASE WHEN p_outcome = 'throttled' THEN v_now + v_wait ELSE lc.retry_not_before END
     WHERE lc.partition_id = p_partition AND lc.consumer_group = p_group AND lc.worker_id = p_lease
       AND lc.lease_expires_at > v_now;
    v_lost := NOT FOUND;
  END IF;

  -- Past the budget without a DLQ the message is skipped, not dead-lettered: the attempt stays 'failed'.
  IF v_outcome = 'failed' AND v_dlq > 0 THEN v_outcome := 'dead_lettered'; END IF;
  IF NOT v_lost THEN
    -- A failure still owed a retry, a throttle and a 410 keep the batch: the resend is the same
    -- messages under the same webhook-id. Anything else ends it.
    v_keep := (p_outcome = 'failed' AND NOT v_dead) OR p_outcome IN ('throttled', 'gone');
    UPDATE queen.subscription_partitions x
       SET lease_id = NULL, lease_until = NULL,
           from_offset = CASE WHEN v_keep THEN x.from_offset END,
           to_offset = CASE WHEN v_keep THEN x.to_offset END,
           webhook_id = CASE WHEN v_keep THEN x.webhook_id END,
           -- When the partition is tried again (a failure still owed a retry, or a throttle).
           next_attempt_at = CASE WHEN p_retry_ms IS NOT NULL AND NOT v_dead THEN v_now + v_wait END
     WHERE x.subscription_id = p_subscription AND x.partition_id = p_partition AND x.lease_id = p_lease;
  ELSE
    -- The cursor's lease is gone (expired, or a seek cleared it): unless another claim took the
    -- partition since, it is no longer in flight; the batch stays, to be sent again.
    UPDATE queen.subscription_partitions x SET lease_id = NULL, lease_until = NULL
     WHERE x.subscription_id = p_subscription AND x.partition_id = p_partition AND x.lease_id = p_lease;
  END IF;

  IF s.id IS NOT NULL THEN
    INSERT INTO queen.subscription_attempts (subscription_id, partition_id, from_offset, to_offset, webhook_id, attempt,
                                             outcome, status, error, latency_ms, response, at)
    VALUES (p_subscription, p_partition, p_from, p_to, p_webhook_id, p_attempt, v_outcome, p_status,
            CASE WHEN v_lost THEN concat_ws('; ', p_error, 'the lease had ended: the batch is sent again') ELSE p_error END,
            p_latency_ms, p_response, v_now);
    IF NOT v_lost THEN
      v_paused := CASE
        WHEN s.state <> 'active' THEN NULL
        WHEN p_outcome = 'gone' THEN 'endpoint_gone'
        WHEN p_outcome = 'failed' AND coalesce(s.failing_since, v_now) + make_interval(secs => s.disable_after_ms / 1000.0) <= v_now
          THEN 'endpoint_failing'
      END;
      UPDATE queen.subscriptions sub
         SET delivered = sub.delivered + v_delivered,
             failed_attempts = sub.failed_attempts + CASE WHEN p_outcome = 'failed' THEN 1 ELSE 0 END,
             dead_lettered = sub.dead_lettered + v_dlq,
             last_attempt_at = v_now,
             failing_since = CASE p_outcome WHEN 'delivered' THEN NULL WHEN 'failed' THEN coalesce(sub.failing_since, v_now)
                                            ELSE sub.failing_since END,
             throttled_until = CASE WHEN p_outcome = 'throttled' THEN greatest(sub.throttled_until, v_now + v_wait)
                                    ELSE sub.throttled_until END,
             state = CASE WHEN v_paused IS NOT NULL THEN 'paused' ELSE sub.state END,
             paused_reason = coalesce(v_paused, sub.paused_reason),
             updated_at = CASE WHEN v_paused IS NOT NULL THEN v_now ELSE sub.updated_at END
       WHERE sub.id = p_subscription;
    END IF;
  END IF;
  RETURN QUERY SELECT v_outcome, v_delivered, v_dlq, v_paused, v_lost;
END
$function$;
