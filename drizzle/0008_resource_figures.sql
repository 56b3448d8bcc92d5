-- Queue resources with Queen's figures (SPEC §3.7, §3.8b): per partition, the messages held and how
-- they split between done, in flight and pending; the overview. All computed from the log per call.
-- done: the held offsets every group with a cursor has committed past; processing: the largest
-- live lease on the partition, within what is not done; pending: the rest. total = completed +
-- processing + pending; deadLetter counts the partition's DLQ rows (a dead letter is also done).
CREATE OR REPLACE FUNCTION queen.partition_figures(p_tenant TEXT, p_queue TEXT)
RETURNS TABLE (queue_id BIGINT, partition_id BIGINT, total BIGINT, pending BIGINT, processing BIGINT,
               completed BIGINT, dead_letter BIGINT, lifetime BIGINT, oldest TIMESTAMPTZ, newest TIMESTAMPTZ)
LANGUAGE sql STABLE
AS $$
  SELECT p.queue_id, p.id, p.last_offset - p.log_start + 1,
         p.last_offset - d.done - LEAST(p.last_offset - d.done, c.leased),
         LEAST(p.last_offset - d.done, c.leased),
         d.done - (p.log_start - 1),
         (SELECT count(*) FROM queen.log_dlq x WHERE x.partition_id = p.id),
         p.last_offset + 1,
         CASE WHEN p.last_offset >= p.log_start THEN queen.segment_time_at(p.id, p.log_start) END,
         CASE WHEN p.last_offset >= p.log_start THEN queen.segment_time_at(p.id, p.last_offset) END
    FROM queen.queues q
    JOIN queen.log_partitions p ON p.queue_id = q.id
    CROSS JOIN LATERAL (
      SELECT min(lc.committed) AS low,
             COALESCE(max(lc.batch_end - GREATEST(lc.committed, p.log_start - 1))
                        FILTER (WHERE lc.batch_end IS NOT NULL AND lc.lease_expires_at > now()), 0) AS leased
        FROM queen.log_consumers lc WHERE lc.partition_id = p.id) c
    CROSS JOIN LATERAL (SELECT GREATEST(COALESCE(c.low, p.log_start - 1), p.log_start - 1) AS done) d
   WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION queen.figures_json(total BIGINT, pending BIGINT, processing BIGINT, completed BIGINT, dead_letter BIGINT)
RETURNS JSONB
LANGUAGE sql IMMUTABLE
AS $$
  SELECT jsonb_build_object('total', total, 'pending', pending, 'processing', processing, 'completed', completed,
                            'failed', NULL, 'deadLetter', dead_letter)
$$;
--> statement-breakpoint
-- GET /resources/queues: Queen's messages {total, pending, processing} (pending without in-flight), plus completed.
CREATE OR REPLACE FUNCTION queen.list_queues(p_tenant TEXT, p_namespace TEXT, p_task TEXT) RETURNS JSONB
LANGUAGE sql STABLE
AS $$
  WITH f AS (
    SELECT f.queue_id, count(*) AS partitions, sum(f.total) AS total, sum(f.pending) AS pending,
           sum(f.processing) AS processing, sum(f.completed) AS completed
      FROM queen.partition_figures(p_tenant, NULL) f GROUP BY f.queue_id
  )
  SELECT COALESCE(jsonb_agg(jsonb_build_object(
           'id', q.id::text, 'name', q.name, 'namespace', q.namespace, 'task', q.task,
           'createdAt', queen.admin_iso(q.created_at), 'partitions', COALESCE(f.partitions, 0),
           'messages', jsonb_build_object('total', COALESCE(f.total, 0), 'pending', COALESCE(f.pending, 0),
                                          'processing', COALESCE(f.processing, 0), 'completed', COALESCE(f.completed, 0)))
           ORDER BY q.name), '[]'::jsonb)
    FROM queen.queues q LEFT JOIN f ON f.queue_id = q.id
   WHERE q.tenant_id = p_tenant
     AND (p_namespace IS NULL OR q.namespace = p_namespace)
     AND (p_task IS NULL OR q.task = p_task)
$$;
--> statement-breakpoint
-- GET /resources/queues/:queue: ours (watermarks, per-group committed and lag) plus Queen's
-- get_queue_v2 keys (per-partition stats, oldest and newest message times, queue totals).
CREATE OR REPLACE FUNCTION queen.describe_queue(p_tenant TEXT, p_name TEXT) RETURNS JSONB
LANGUAGE sql STABLE
AS $$
  WITH f AS (SELECT * FROM queen.partition_figures(p_tenant, p_name))
  SELECT jsonb_build_object(
           'id', q.id::text, 'name', q.name, 'namespace', q.namespace, 'task', q.task,
           'createdAt', queen.admin_iso(q.created_at), 'updatedAt', queen.admin_iso(q.updated_at),
           'options', queen.queue_options(q),
           'partitions', COALESCE((
             SELECT jsonb_agg(jsonb_build_object(
                      'id', p.id::text, 'name', p.name, 'last_offset', p.last_offset,
                      'log_start', p.log_start, 'txns_start', p.txns_start,
                      'messages', p.last_offset - p.log_start + 1,
                      'stats', queen.figures_json(f.total, f.pending, f.processing, f.completed, f.dead_letter),
                      'oldestMessage', queen.admin_iso(f.oldest), 'newestMessage', queen.admin_iso(f.newest),
                      'createdAt', queen.admin_iso(p.created_at), 'lastWriteAt', queen.admin_iso(p.last_write_at),
                      'consumerGroups', COALESCE((
                        SELECT jsonb_agg(jsonb_build_object(
                                 'consumerGroup', c.consumer_group, 'committed', c.committed,
                                 'lag', p.last_offset - GREATEST(c.committed, p.log_start - 1),
                                 'leased', c.batch_end IS NOT NULL AND c.lease_expires_at > now(),
                                 'leaseExpiresAt', queen.admin_iso(c.lease_expires_at),
                                 'retryCount', c.batch_retry_count) ORDER BY c.consumer_group)
                          FROM queen.log_consumers c WHERE c.partition_id = p.id), '[]'::jsonb))
                    ORDER BY p.name)
               FROM queen.log_partitions p JOIN f ON f.partition_id = p.id), '[]'::jsonb),
           'totals', (SELECT queen.figures_json(COALESCE(sum(f.total), 0)::bigint, COALESCE(sum(f.pending), 0)::bigint,
                                                COALESCE(sum(f.processing), 0)::bigint, COALESCE(sum(f.completed), 0)::bigint,
                                                COALESCE(sum(f.dead_letter), 0)::bigint) FROM f))
    FROM queen.queues q
   WHERE q.tenant_id = p_tenant AND q.name = p_name
$$;
--> statement-breakpoint
-- avg, median, min and max of a set of figures, rounded to hundredths; all 0 for an empty set.
CREATE OR REPLACE FUNCTION queen.spread_json(v BIGINT[]) RETURNS JSONB
LANGUAGE sql IMMUTABLE
AS $$
  SELECT jsonb_build_object(
    'avg', COALESCE(round(avg(x)::numeric, 2), 0),
    'median', COALESCE(round((percentile_cont(0.5) WITHIN GROUP (ORDER BY x))::numeric, 2), 0),
    'min', COALESCE(min(x), 0), 'max', COALESCE(max(x), 0))
    FROM unnest(v) AS x
$$;
--> statement-breakpoint
-- GET /resources/overview (Queen's get_system_overview_v3 keys). Lag figures are over the
-- (group, partition) pairs with a backlog; ingestedPerSecond is the messages whose segments were
-- written in the last 5 minutes, over 300 s (offsets are contiguous there, and only a partition
-- written since, less the last_write_at slack, can hold any). No hot-path counter exists for
-- acks, so processedPerSecond and failed are null.
CREATE OR REPLACE FUNCTION queen.resources_overview(p_tenant TEXT) RETURNS JSONB
LANGUAGE sql STABLE
AS $$
  WITH f AS (SELECT * FROM queen.partition_figures(p_tenant, NULL)),
  g AS (SELECT x.lag, x.age FROM queen.group_partitions(p_tenant, NULL, NULL) x WHERE x.lag > 0),
  recent AS (
    SELECT COALESCE(sum(p.last_offset + 1 - queen.offset_at_time(p.id, now() - interval '5 minutes')), 0) AS n
      FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
     WHERE q.tenant_id = p_tenant AND p.last_write_at >= now() - interval '7 minutes'
  ), qs AS (
    SELECT count(*) AS queues, count(DISTINCT q.namespace) AS namespaces, count(DISTINCT q.task) AS tasks
      FROM queen.queues q WHERE q.tenant_id = p_tenant
  )
  SELECT jsonb_build_object(
    'queues', qs.queues, 'partitions', (SELECT count(*) FROM f), 'namespaces', qs.namespaces, 'tasks', qs.tasks,
    'messages', (SELECT queen.figures_json(COALESCE(sum(f.total), 0)::bigint, COALESCE(sum(f.pending), 0)::bigint,
                                           COALESCE(sum(f.processing), 0)::bigint, COALESCE(sum(f.completed), 0)::bigint,
                                           COALESCE(sum(f.dead_letter), 0)::bigint) FROM f),
    'lag', jsonb_build_object('time', queen.spread_json(ARRAY(SELECT g.age FROM g)),
                              'offset', queen.spread_json(ARRAY(SELECT g.lag FROM g))),
    'throughput', jsonb_build_object('ingestedPerSecond', round(recent.n / 300.0, 2), 'processedPerSecond', NULL),
    'timestamp', queen.admin_iso(now()), 'statsAge', 0,
    'lifetimePushed', (SELECT COALESCE(sum(f.lifetime), 0) FROM f))
    FROM qs, recent
$$;
