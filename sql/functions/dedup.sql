-- Duplicate detection and ack by transactionId: the sidecar's keys and the lookups through them
-- (docs/storage.md#the-duplicate-probe).

-- A message's dedup key: its hash's first 64 bits XOR the partition id, an int8. The GIN index holds
-- 8 bytes a message where a (partition || hash) bytea took 24 (75 of the 151 bytes a message cost
-- at batch 100), and compares integers; a match is still decided on the full 128-bit hash in the
-- sidecar row, so a false match costs a row read, never a wrong answer.
CREATE OR REPLACE FUNCTION queen.txn_key(p_partition bigint, p_hash bytea)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT ('x' || encode(substring(p_hash FROM 1 FOR 8), 'hex'))::bit(64)::bigint # p_partition
$function$;

-- The dedup keys of a sidecar row's hashes, for rows written without stored keys (before they were
-- stored, or by a previous release): the GIN index's expression falls back to it.
CREATE OR REPLACE FUNCTION queen.log_txn_keys64(p_partition bigint, p_hashes bytea)
 RETURNS bigint[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT ARRAY(SELECT queen.txn_key(p_partition, substring(p_hashes FROM i * 16 + 1 FOR 16))
                 FROM generate_series(0, length(p_hashes) / 16 - 1) AS i)
$function$;

-- Explodes a 16-byte-stride hash blob into (idx, hash) rows, idx zero-based. Pure byte slicing,
-- inlinable by the planner.
CREATE OR REPLACE FUNCTION queen.log_unnest_hashes(p bytea)
 RETURNS TABLE(idx integer, h bytea)
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
  SELECT i, substring(p FROM i * 16 + 1 FOR 16)
  FROM generate_series(0, length(p) / 16 - 1) AS i
$function$;

-- Every offset in [p_from, p_to] of the partition whose sidecar hash is one of p_hashes, through
-- the dedup GIN index (docs/storage.md#the-duplicate-probe). The one place an ack by transactionId
-- reads that index, never the whole partition (docs/storage.md#how-an-ack-finds-its-message): the
-- cost follows the rows holding a key, not the length of the range. EXECUTE plans it with the
-- values: a cached generic plan would rather walk the range on the primary key and compute every
-- row's keys.
CREATE OR REPLACE FUNCTION queen.find_txn_offsets(p_partition bigint, p_hashes bytea[], p_from bigint, p_to bigint)
 RETURNS TABLE(hash bytea, msg_offset bigint)
 LANGUAGE plpgsql
 STABLE
 SET jit TO 'off'
AS $function$
DECLARE
  v_first_row BIGINT;
BEGIN
  -- The sidecar row holding p_from starts at or before it: base_offset is bounded on both sides.
  SELECT t.base_offset INTO v_first_row FROM queen.log_txns t
   WHERE t.partition_id = p_partition AND t.base_offset <= p_from ORDER BY t.base_offset DESC LIMIT 1;
  RETURN QUERY EXECUTE $q$
    WITH want AS MATERIALIZED (
      SELECT DISTINCT w.h FROM unnest($2::BYTEA[]) AS w(h)
    ), hit_rows AS MATERIALIZED (
      SELECT t.base_offset, t.hashes FROM queen.log_txns t
       WHERE COALESCE(t.keys, queen.log_txn_keys64(t.partition_id, t.hashes)) && ARRAY(SELECT queen.txn_key($1::BIGINT, want.h) FROM want)
         AND t.partition_id = $1 AND t.base_offset >= $3 AND t.base_offset <= $5
    )
    SELECT u.h, r.base_offset + u.idx
      FROM hit_rows r CROSS JOIN LATERAL queen.log_unnest_hashes(r.hashes) AS u
      JOIN want ON want.h = u.h
     WHERE r.base_offset + u.idx BETWEEN $4 AND $5
  $q$ USING p_partition, p_hashes, coalesce(v_first_row, p_from), p_from, p_to;
END
$function$;

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

-- The offset of a transactionId in a partition, for a trace: the lowest live offset whose sidecar
-- hash matches (through the dedup GIN index), else the lowest DLQ copy; NULL when neither knows it.
CREATE OR REPLACE FUNCTION queen.message_offset(p_partition bigint, p_hash bytea, p_txn text)
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT COALESCE(
    (SELECT min(t.base_offset + h.idx)
       FROM queen.log_partitions p, queen.log_txns t, LATERAL queen.log_unnest_hashes(t.hashes) h
      WHERE p.id = p_partition AND t.partition_id = p_partition
        AND COALESCE(t.keys, queen.log_txn_keys64(t.partition_id, t.hashes)) && ARRAY[queen.txn_key(p_partition, p_hash)]
        AND h.h = p_hash AND t.base_offset + h.idx >= p.log_start),
    (SELECT min(d.msg_offset) FROM queen.log_dlq d WHERE d.partition_id = p_partition AND d.transaction_id = p_txn))
$function$;
