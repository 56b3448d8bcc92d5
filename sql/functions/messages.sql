-- The message browser (SPEC §3.8b: Queen's GET /api/v1/messages) and the message-level status the
-- list and the detail share. SQL never decompresses: it picks the segments a page needs and the
-- broker decodes only those.
-- Where a message's status changes along a partition's offsets, Queen's rule: the queue-mode
-- cursor decides when the partition has one (completed up to its cursor, processing up to its
-- live lease's end); otherwise completed once every named group has passed it. Offsets above
-- processing_to are pending; a message with any DLQ row is dead_letter whatever its offset.
CREATE OR REPLACE FUNCTION queen.message_marks(p_partition bigint)
 RETURNS TABLE(queue_mode boolean, completed_to bigint, processing_to bigint, lease_expires_at timestamp with time zone, bus bigint[], bus_groups text[])
 LANGUAGE sql
 STABLE
AS $function$
  WITH g AS (SELECT * FROM queen.partition_groups(p_partition)),
  qm AS (SELECT * FROM g WHERE g.consumer_group = '__QUEUE_MODE__'),
  done AS (
    SELECT COALESCE((SELECT qm.committed FROM qm), (SELECT min(g.committed) FROM g), p.log_start - 1) AS upto
      FROM queen.log_partitions p WHERE p.id = p_partition)
  SELECT EXISTS (SELECT 1 FROM qm), done.upto,
         GREATEST(done.upto, COALESCE((SELECT qm.lease_end FROM qm), done.upto)),
         (SELECT qm.lease_expires_at FROM qm),
         ARRAY(SELECT g.committed FROM g WHERE g.consumer_group <> '__QUEUE_MODE__' ORDER BY g.consumer_group),
         ARRAY(SELECT g.consumer_group FROM g WHERE g.consumer_group <> '__QUEUE_MODE__' ORDER BY g.consumer_group)
    FROM done
$function$;

-- GET /messages: the segments one page needs, newest first, and a 'mode' row summarising the
-- groups of every partition with messages in the window: from p_from (default an hour ago) to
-- the end of p_to's minute (default now), as Queen rounds it. A partition's window is the offset
-- range [lo, hi) of its segments created in it (created_at is monotone in offset, seed invariant 2),
-- narrowed to [a, b] where the status filter can match. Per partition at most p_need segments
-- are taken, each holding at least one matching message, scanning backwards on the primary key;
-- then, across partitions, segments are taken newest first until p_need matching messages are
-- covered (p_need = offset + limit). Dead letters are found from their DLQ rows.
CREATE OR REPLACE FUNCTION queen.list_messages(p_tenant text, p_queue text, p_partition text, p_namespace text, p_task text, p_status text, p_from timestamp with time zone, p_to timestamp with time zone, p_need integer)
 RETURNS TABLE(kind text, partition_id bigint, queue text, partition text, namespace text, task text, priority integer, base_offset bigint, end_offset bigint, created_at timestamp with time zone, blob bytea, queue_mode boolean, completed_to bigint, processing_to bigint, lease_expires_at timestamp with time zone, bus bigint[], dlq bigint[], mode jsonb)
 LANGUAGE sql
 STABLE
AS $function$
  WITH b AS (
    SELECT COALESCE(p_from, now() - interval '1 hour') AS t0,
           date_trunc('minute', COALESCE(p_to, now())) + interval '1 minute' AS t1
  ), part AS MATERIALIZED (
    SELECT p.id, q.name AS queue, p.name AS partition, q.namespace, q.task, q.priority,
           queen.offset_at_time(p.id, b.t0) AS lo, queen.offset_at_time(p.id, b.t1) AS hi
      FROM b, queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
     WHERE q.tenant_id = p_tenant AND (p_queue IS NULL OR q.name = p_queue)
       AND (p_namespace IS NULL OR q.namespace = p_namespace) AND (p_task IS NULL OR q.task = p_task)
       AND (p_partition IS NULL OR p.name = p_partition)
       AND p.last_write_at >= b.t0 - interval '2 minutes' AND p.last_offset >= p.log_start
  ), win AS MATERIALIZED (
    SELECT part.*, m.* FROM part CROSS JOIN LATERAL queen.message_marks(part.id) m WHERE part.lo < part.hi
  ), rng AS (
    SELECT r.*, COALESCE((SELECT s0.base_offset FROM queen.log_segments s0
                           WHERE s0.partition_id = r.id AND s0.base_offset <= r.a
                           ORDER BY s0.base_offset DESC LIMIT 1), r.a) AS a_base
      FROM (SELECT win.*,
                   CASE p_status WHEN 'processing' THEN GREATEST(win.lo, win.completed_to + 1)
                                 WHEN 'pending' THEN GREATEST(win.lo, win.processing_to + 1) ELSE win.lo END AS a,
                   CASE p_status WHEN 'completed' THEN LEAST(win.hi - 1, win.completed_to)
                                 WHEN 'processing' THEN LEAST(win.hi - 1, win.processing_to) ELSE win.hi - 1 END AS b
              FROM win) r
  ), seg AS (
    SELECT r.id, x.base_offset, x.end_offset, x.created_at, x.matching
      FROM rng r
      CROSS JOIN LATERAL (
        SELECT s.base_offset, s.end_offset, s.created_at, m.n AS matching
          FROM queen.log_segments s
          CROSS JOIN LATERAL (
            SELECT LEAST(s.end_offset, r.b) - GREATEST(s.base_offset, r.a) + 1
                   - CASE WHEN p_status IS NULL THEN 0 ELSE (
                       SELECT count(DISTINCT d.msg_offset) FROM queen.log_dlq d
                        WHERE d.partition_id = r.id
                          AND d.msg_offset BETWEEN GREATEST(s.base_offset, r.a) AND LEAST(s.end_offset, r.b)) END AS n) m
         WHERE s.partition_id = r.id AND s.base_offset BETWEEN r.a_base AND r.b AND s.end_offset >= r.a AND m.n > 0
         ORDER BY s.base_offset DESC LIMIT p_need) x
     WHERE p_status IS DISTINCT FROM 'dead_letter' AND r.a <= r.b
    UNION ALL
    SELECT r.id, s.base_offset, s.end_offset, s.created_at, count(*)
      FROM rng r
      CROSS JOIN LATERAL (
        SELECT DISTINCT d.msg_offset FROM queen.log_dlq d
         WHERE d.partition_id = r.id AND d.msg_offset >= r.lo AND d.msg_offset < r.hi
         ORDER BY d.msg_offset DESC LIMIT p_need) o
      CROSS JOIN LATERAL (
        SELECT s1.base_offset, s1.end_offset, s1.created_at FROM queen.log_segments s1
         WHERE s1.partition_id = r.id AND s1.base_offset <= o.msg_offset
         ORDER BY s1.base_offset DESC LIMIT 1) s
     WHERE p_status = 'dead_letter' AND s.end_offset >= o.msg_offset
     GROUP BY r.id, s.base_offset, s.end_offset, s.created_at
  ), ranked AS (
    SELECT seg.*, sum(seg.matching) OVER (ORDER BY seg.created_at DESC, seg.id DESC, seg.base_offset DESC
                                          ROWS UNBOUNDED PRECEDING) AS running
      FROM seg
  )
  SELECT 'seg', w.id, w.queue, w.partition, w.namespace, w.task, w.priority, k.base_offset, k.end_offset,
         k.created_at, s.blob, w.queue_mode, w.completed_to, w.processing_to, w.lease_expires_at, w.bus,
         ARRAY(SELECT DISTINCT d.msg_offset FROM queen.log_dlq d
                WHERE d.partition_id = w.id AND d.msg_offset BETWEEN k.base_offset AND k.end_offset),
         NULL::jsonb
    FROM ranked k
    JOIN win w ON w.id = k.id
    JOIN queen.log_segments s ON s.partition_id = k.id AND s.base_offset = k.base_offset
   WHERE k.running - k.matching < p_need
  UNION ALL
  SELECT 'mode', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         jsonb_build_object(
           'hasQueueMode', COALESCE(bool_or(w.queue_mode), false),
           'busGroupsCount', (SELECT count(DISTINCT g) FROM win, unnest(win.bus_groups) AS g))
    FROM win w
  ORDER BY 1 DESC, 10 DESC, 2 DESC, 8 DESC
$function$;
