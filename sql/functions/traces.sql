-- Traces (SPEC §3.8b, Queen's /api/v1/traces routes): stored per message, read by name or by
-- message, purged by retention.

-- Stores one trace and its names; no row when the partition is not the tenant's. The queue row is
-- key-share locked so a concurrent queue delete either waits or makes this a "not found".
CREATE OR REPLACE FUNCTION queen.record_trace(p_tenant text, p_id uuid, p_partition bigint, p_txn text, p_hash bytea, p_group text, p_event text, p_data jsonb, p_names text[])
 RETURNS TABLE(trace_id uuid, msg_offset bigint)
 LANGUAGE sql
AS $function$
  WITH part AS (
    SELECT p.id, p.queue_id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE p.id = p_partition AND q.tenant_id = p_tenant
       FOR KEY SHARE OF q
  ), t AS (
    INSERT INTO queen.message_traces (id, queue_id, partition_id, msg_offset, transaction_id, consumer_group, event_type, data)
    SELECT p_id, part.queue_id, part.id, queen.message_offset(part.id, p_hash, p_txn), p_txn, p_group, p_event, p_data
      FROM part
    RETURNING id, msg_offset, created_at
  ), n AS (
    INSERT INTO queen.message_trace_names (trace_id, tenant_id, trace_name, created_at)
    SELECT DISTINCT t.id, p_tenant, x.name, t.created_at FROM t, unnest(p_names) AS x(name)
  )
  SELECT t.id, t.msg_offset FROM t
$function$;

-- One trace as the readers answer it: Queen's snake_case keys; worker_id is always null (no
-- long-lived workers) and offset is ours.
CREATE OR REPLACE FUNCTION queen.trace_json(t queen.message_traces)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object(
    'id', t.id, 'transaction_id', t.transaction_id, 'partition_id', t.partition_id::text,
    'event_type', t.event_type, 'data', t.data, 'consumer_group', t.consumer_group, 'worker_id', NULL,
    'created_at', queen.admin_iso(t.created_at), 'offset', t.msg_offset,
    'trace_names', COALESCE((SELECT jsonb_agg(n.trace_name ORDER BY n.trace_name)
                               FROM queen.message_trace_names n WHERE n.trace_id = t.id), '[]'::jsonb))
$function$;

-- GET /traces/names: the tenant's trace names, most recently seen first, with how many traces and
-- how many distinct messages carry each.
CREATE OR REPLACE FUNCTION queen.trace_names(p_tenant text, p_limit integer, p_offset integer)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object(
    'trace_names', COALESCE((
      SELECT jsonb_agg(jsonb_build_object(
               'trace_name', s.trace_name, 'trace_count', s.traces, 'message_count', s.messages,
               'last_seen', queen.admin_iso(s.last_seen)) ORDER BY s.last_seen DESC, s.trace_name)
        FROM (SELECT n.trace_name, count(*) AS traces,
                     count(DISTINCT (t.partition_id, t.transaction_id)) AS messages, max(n.created_at) AS last_seen
                FROM queen.message_trace_names n JOIN queen.message_traces t ON t.id = n.trace_id
               WHERE n.tenant_id = p_tenant
               GROUP BY n.trace_name
               ORDER BY max(n.created_at) DESC, n.trace_name LIMIT p_limit OFFSET p_offset) s), '[]'::jsonb),
    'total', (SELECT count(DISTINCT n.trace_name) FROM queen.message_trace_names n WHERE n.tenant_id = p_tenant),
    'pagination', jsonb_build_object('limit', p_limit, 'offset', p_offset))
$function$;

-- GET /traces/by-name/:name: one page, oldest first, with the queue and partition names; total
-- counts every trace carrying the name. The message payload would need a segment decode per row:
-- message_payload is null.
CREATE OR REPLACE FUNCTION queen.traces_by_name(p_tenant text, p_name text, p_limit integer, p_offset integer)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object(
    'traces', COALESCE((
      SELECT jsonb_agg(queen.trace_json(t) || jsonb_build_object(
               'queue_name', q.name, 'partition_name', p.name, 'message_payload', NULL)
             ORDER BY page.created_at, page.trace_id)
        FROM (SELECT n.trace_id, n.created_at FROM queen.message_trace_names n
               WHERE n.tenant_id = p_tenant AND n.trace_name = p_name
               ORDER BY n.created_at, n.trace_id LIMIT p_limit OFFSET p_offset) page
        JOIN queen.message_traces t ON t.id = page.trace_id
        JOIN queen.queues q ON q.id = t.queue_id
        LEFT JOIN queen.log_partitions p ON p.id = t.partition_id), '[]'::jsonb),
    'total', (SELECT count(*) FROM queen.message_trace_names n WHERE n.tenant_id = p_tenant AND n.trace_name = p_name),
    'pagination', jsonb_build_object('limit', p_limit, 'offset', p_offset))
$function$;

-- GET /traces/:partitionId/:transactionId: oldest first; [] for an unknown or another tenant's partition.
CREATE OR REPLACE FUNCTION queen.message_traces_of(p_tenant text, p_partition bigint, p_txn text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object('traces', COALESCE(jsonb_agg(queen.trace_json(t) ORDER BY t.created_at, t.id), '[]'::jsonb))
    FROM queen.log_partitions p
    JOIN queen.queues q ON q.id = p.queue_id
    JOIN queen.message_traces t ON t.queue_id = p.queue_id AND t.partition_id = p.id AND t.transaction_id = p_txn
   WHERE p.id = p_partition AND q.tenant_id = p_tenant
$function$;

-- Retention: deletes at most p_limit traces older than p_max_age_seconds (their names cascade),
-- oldest first through the created_at index; returns how many went.
CREATE OR REPLACE FUNCTION queen.purge_traces(p_max_age_seconds integer, p_limit integer)
 RETURNS bigint
 LANGUAGE sql
AS $function$
  WITH d AS (
    DELETE FROM queen.message_traces t WHERE t.id IN (
      SELECT x.id FROM queen.message_traces x
       WHERE x.created_at < now() - make_interval(secs => p_max_age_seconds)
       ORDER BY x.created_at LIMIT p_limit)
    RETURNING 1)
  SELECT count(*) FROM d
$function$;
