-- /metrics, /metrics/prometheus and GET /api/v1/analytics/postgres-stats.

-- /metrics (JSON): lifetime pushes of the tenant and their rate over the rollup's last five closed minutes.
CREATE OR REPLACE FUNCTION queen.metrics_totals(p_tenant text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET jit TO 'off'
AS $function$
  WITH qs AS (SELECT queen.tenant_queue_ids(p_tenant, NULL, NULL, NULL) AS ids)
  SELECT jsonb_build_object(
    'pushed', (SELECT COALESCE(sum(p.last_offset + 1), 0) FROM qs, queen.log_partitions p WHERE p.queue_id = ANY (qs.ids)),
    'pushedPerSecond', (SELECT round(COALESCE(sum(m.pushed_messages), 0)::numeric / 300, 2)
                          FROM qs, queen.minute_stats_state st
                          JOIN queen.queue_minute_stats m ON m.bucket >= st.rolled_to - interval '5 minutes' AND m.bucket < st.rolled_to
                         WHERE st.id AND m.queue_id = ANY (qs.ids)))
$function$;

-- Everything one scrape shows for a tenant. Per queue: partitions, held and lifetime messages,
-- dead letters, live segments and their compressed bytes (a read of every live segment row's
-- length, never its blob), sidecar hash bytes (16 per message from txns_start), and pushes in the
-- last closed minute of the rollup. Per (queue, group): lag, oldest unconsumed age, in flight,
-- leased partitions, lifetime consumption. Per partition only while the tenant has at most
-- p_partition_limit of them. Table sizes are database-wide: only when p_database is true. JSON,
-- not JSONB: it is built per partition and read once.
CREATE OR REPLACE FUNCTION queen.metrics_snapshot(p_tenant text, p_partition_limit integer, p_database boolean)
 RETURNS json
 LANGUAGE plpgsql
 STABLE
 SET jit TO 'off'
AS $function$
DECLARE
  qs BIGINT[] := queen.tenant_queue_ids(p_tenant, NULL, NULL, NULL);
  n_partitions BIGINT;
  st queen.minute_stats_state;
  flags queen.tenant_settings;
  queues JSON;
  groups JSON;
  partitions JSON;
  tables JSON;
BEGIN
  SELECT count(*) INTO n_partitions FROM queen.log_partitions p WHERE p.queue_id = ANY (qs);
  SELECT * INTO st FROM queen.minute_stats_state s WHERE s.id;
  SELECT * INTO flags FROM queen.tenant_settings s WHERE s.tenant_id = p_tenant;

  SELECT COALESCE(json_agg(json_build_object(
           'queue', q.name, 'partitions', COALESCE(pt.partitions, 0), 'messages', COALESCE(pt.held, 0),
           'pushed', COALESCE(pt.pushed, 0), 'sidecarBytes', COALESCE(pt.sidecar_bytes, 0), 'deadLetter', COALESCE(d.n, 0),
           'segments', COALESCE(sg.segments, 0), 'segmentBytes', COALESCE(sg.bytes, 0),
           'pushedLastMinute', CASE WHEN st.rolled_to IS NOT NULL THEN COALESCE(m.pushed_messages, 0) END)
           ORDER BY q.name), '[]'::json)
    INTO queues
    FROM queen.queues q
    LEFT JOIN LATERAL (
      SELECT count(*) AS partitions, sum(p.last_offset - p.log_start + 1) AS held, sum(p.last_offset + 1) AS pushed,
             16 * sum(p.last_offset + 1 - LEAST(p.txns_start, p.last_offset + 1)) AS sidecar_bytes
        FROM queen.log_partitions p WHERE p.queue_id = q.id) pt ON true
    LEFT JOIN LATERAL (
      SELECT count(*) AS segments, sum(octet_length(s.blob)) AS bytes
        FROM queen.log_partitions p JOIN queen.log_segments s ON s.partition_id = p.id AND s.base_offset >= p.log_start
       WHERE p.queue_id = q.id) sg ON true
    LEFT JOIN LATERAL (
      SELECT count(*) AS n FROM queen.log_partitions p JOIN queen.log_dlq dl ON dl.partition_id = p.id WHERE p.queue_id = q.id) d ON true
    LEFT JOIN queen.queue_minute_stats m ON m.queue_id = q.id AND m.bucket = st.rolled_to - interval '1 minute'
   WHERE q.id = ANY (qs);

  SELECT COALESCE(json_agg(json_build_object(
           'queue', q.name, 'group', g.consumer_group, 'partitions', g.partitions, 'lag', g.lag,
           'oldestAgeSeconds', g.oldest_age, 'inFlight', g.in_flight, 'leased', g.leased, 'consumed', g.consumed)
           ORDER BY q.name, g.consumer_group), '[]'::json)
    INTO groups
    FROM (
      SELECT gp.queue_id, gp.consumer_group, count(*) AS partitions, sum(gp.lag) AS lag,
             COALESCE(max(extract(epoch FROM now() - gp.since)), 0) AS oldest_age,
             sum(gp.in_flight) AS in_flight, count(*) FILTER (WHERE gp.worker_id IS NOT NULL) AS leased,
             sum(gp.total_consumed) AS consumed
        FROM queen.group_positions(qs) gp
       GROUP BY gp.queue_id, gp.consumer_group) g
    JOIN queen.queues q ON q.id = g.queue_id;

  IF n_partitions <= p_partition_limit THEN
    SELECT COALESCE(json_agg(json_build_object('queue', q.name, 'partition', p.name, 'lastOffset', p.last_offset,
             'logStart', p.log_start) ORDER BY q.name, p.name), '[]'::json)
      INTO partitions
      FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
     WHERE p.queue_id = ANY (qs);
  END IF;

  IF p_database THEN
    SELECT json_agg(json_build_object('table', c.relname, 'bytes', pg_total_relation_size(c.oid)) ORDER BY c.relname)
      INTO tables
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'queen' AND c.relkind = 'r';
  END IF;

  RETURN json_build_object(
    'queues', queues, 'groups', groups, 'partitionCount', n_partitions, 'partitions', partitions,
    'maintenance', COALESCE(flags.maintenance, false), 'popMaintenance', COALESCE(flags.pop_maintenance, false),
    'rollupAgeSeconds', CASE WHEN st.sampled_at IS NOT NULL THEN extract(epoch FROM now() - st.sampled_at) END,
    'tables', tables);
END
$function$;

-- PostgreSQL's own statistics for the queen schema (database-wide, so for admins): cache hit
-- ratios, dead tuples, HOT updates, autovacuum, long-running statements, buffer settings and
-- usage (pg_buffercache only when installed), and table sizes.
CREATE OR REPLACE FUNCTION queen.postgres_stats()
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET jit TO 'off'
AS $function$
DECLARE
  usage JSONB := '[]'::jsonb;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_buffercache') THEN
    EXECUTE $q$
      SELECT COALESCE(jsonb_agg(x ORDER BY (x->>'bufferedBytes')::bigint DESC), '[]'::jsonb) FROM (
        SELECT jsonb_build_object('object', c.relname, 'bufferedSize', pg_size_pretty(count(*) * 8192),
                 'bufferedBytes', count(*) * 8192,
                 'percentOfCache', round(100.0 * count(*) / (SELECT g.setting::int FROM pg_settings g WHERE g.name = 'shared_buffers'), 2)) AS x
          FROM pg_buffercache b JOIN pg_class c ON pg_relation_filenode(c.oid) = b.relfilenode
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'queen' AND b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
         GROUP BY c.relname ORDER BY count(*) DESC LIMIT 20) t
    $q$ INTO usage;
  END IF;
  RETURN (
    SELECT jsonb_build_object(
      'timestamp', queen.admin_iso(now()), 'database', current_database(),
      'databaseCache', (SELECT jsonb_build_object('database', d.datname, 'diskReads', d.blks_read, 'cacheHits', d.blks_hit,
                          'cacheHitRatio', round(d.blks_hit::numeric / NULLIF(d.blks_hit + d.blks_read, 0) * 100, 2))
                          FROM pg_stat_database d WHERE d.datname = current_database()),
      'tableCache', COALESCE((SELECT jsonb_agg(jsonb_build_object('schema', t.schemaname, 'table', t.relname,
                          'diskReads', t.heap_blks_read, 'cacheHits', t.heap_blks_hit,
                          'cacheHitRatio', round(t.heap_blks_hit::numeric / NULLIF(t.heap_blks_hit + t.heap_blks_read, 0) * 100, 2))
                          ORDER BY t.relname) FROM pg_statio_user_tables t WHERE t.schemaname = 'queen'), '[]'::jsonb),
      'indexCache', COALESCE((SELECT jsonb_agg(x) FROM (
                          SELECT jsonb_build_object('schema', i.schemaname, 'table', i.relname, 'index', i.indexrelname,
                            'diskReads', i.idx_blks_read, 'cacheHits', i.idx_blks_hit,
                            'cacheHitRatio', round(i.idx_blks_hit::numeric / NULLIF(i.idx_blks_hit + i.idx_blks_read, 0) * 100, 2)) AS x
                            FROM pg_statio_user_indexes i WHERE i.schemaname = 'queen'
                           ORDER BY i.idx_blks_hit + i.idx_blks_read DESC LIMIT 20) t), '[]'::jsonb),
      'cacheSummary', (SELECT jsonb_build_object(
                          'tables', jsonb_build_object('diskReads', COALESCE(sum(t.heap_blks_read), 0), 'cacheHits', COALESCE(sum(t.heap_blks_hit), 0),
                                      'hitRatio', round(sum(t.heap_blks_hit)::numeric / NULLIF(sum(t.heap_blks_hit) + sum(t.heap_blks_read), 0) * 100, 2)),
                          'indexes', (SELECT jsonb_build_object('diskReads', COALESCE(sum(i.idx_blks_read), 0), 'cacheHits', COALESCE(sum(i.idx_blks_hit), 0),
                                      'hitRatio', round(sum(i.idx_blks_hit)::numeric / NULLIF(sum(i.idx_blks_hit) + sum(i.idx_blks_read), 0) * 100, 2))
                                        FROM pg_statio_user_indexes i WHERE i.schemaname = 'queen'))
                          FROM pg_statio_user_tables t WHERE t.schemaname = 'queen'),
      'deadTuples', COALESCE((SELECT jsonb_agg(x) FROM (
                          SELECT jsonb_build_object('schema', s.schemaname, 'table', s.relname, 'deadTuples', s.n_dead_tup,
                            'liveTuples', s.n_live_tup, 'deadPercentage', round(s.n_dead_tup::numeric / NULLIF(s.n_live_tup, 0) * 100, 2),
                            'lastVacuum', queen.admin_iso(s.last_vacuum), 'lastAutovacuum', queen.admin_iso(s.last_autovacuum)) AS x
                            FROM pg_stat_user_tables s WHERE s.schemaname = 'queen' AND s.n_dead_tup > 0
                           ORDER BY s.n_dead_tup DESC LIMIT 15) t), '[]'::jsonb),
      'hotUpdates', COALESCE((SELECT jsonb_agg(jsonb_build_object('schema', s.schemaname, 'table', s.relname,
                          'totalUpdates', s.n_tup_upd, 'hotUpdates', s.n_tup_hot_upd,
                          'hotUpdatePercentage', round(s.n_tup_hot_upd::numeric / NULLIF(s.n_tup_upd, 0) * 100, 2))
                          ORDER BY s.n_tup_upd DESC) FROM pg_stat_user_tables s WHERE s.schemaname = 'queen' AND s.n_tup_upd > 0), '[]'::jsonb),
      'activeQueries', COALESCE((SELECT jsonb_agg(x) FROM (
                          SELECT jsonb_build_object('pid', a.pid, 'duration', round(extract(epoch FROM now() - a.query_start)::numeric, 3),
                            'state', a.state, 'query', left(a.query, 200), 'waitEventType', a.wait_event_type, 'waitEvent', a.wait_event) AS x
                            FROM pg_stat_activity a
                           WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.state IS DISTINCT FROM 'idle'
                             AND a.query_start < now() - interval '1 second'
                           ORDER BY a.query_start LIMIT 10) t), '[]'::jsonb),
      'autovacuumStatus', COALESCE((SELECT jsonb_agg(jsonb_build_object('table', s.relname,
                          'lastAutovacuum', queen.admin_iso(s.last_autovacuum), 'deadTuples', s.n_dead_tup,
                          'autovacuumCount', s.autovacuum_count, 'autoanalyzeCount', s.autoanalyze_count) ORDER BY s.n_dead_tup DESC)
                          FROM pg_stat_user_tables s WHERE s.schemaname = 'queen' AND s.n_dead_tup > 1000), '[]'::jsonb),
      'bufferConfig', (SELECT jsonb_build_object('sharedBuffers', g.setting, 'sharedBuffersSize', pg_size_pretty(g.setting::bigint * 8192))
                          FROM pg_settings g WHERE g.name = 'shared_buffers'),
      'bufferUsage', usage,
      'tableSizes', COALESCE((SELECT jsonb_agg(jsonb_build_object('table', c.relname,
                          'totalSize', pg_size_pretty(pg_total_relation_size(c.oid)), 'totalSizeBytes', pg_total_relation_size(c.oid),
                          'tableSize', pg_size_pretty(pg_relation_size(c.oid)), 'tableSizeBytes', pg_relation_size(c.oid),
                          'indexSize', pg_size_pretty(pg_indexes_size(c.oid)), 'indexSizeBytes', pg_indexes_size(c.oid))
                          ORDER BY pg_total_relation_size(c.oid) DESC)
                          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                         WHERE n.nspname = 'queen' AND c.relkind = 'r'), '[]'::jsonb)));
END
$function$;
