-- Ack by transactionId (HARD-PARTS §5): the sidecar lookups queen.ack_cursor (next migration)
-- makes, never over the whole partition. find_txn_offsets is the one place an ack reads the dedup
-- index, so a change of that index changes this function only.
--
-- Every offset in [p_from, p_to] of the partition whose sidecar hash is one of p_hashes, through the
-- dedup GIN index of 0002 (keys are partition-prefixed hashes): the cost follows the rows holding a
-- key, not the length of the range. EXECUTE plans it with the values: a cached generic plan would
-- rather walk the range on the primary key and compute every row's keys.
CREATE OR REPLACE FUNCTION queen.find_txn_offsets(p_partition BIGINT, p_hashes BYTEA[], p_from BIGINT, p_to BIGINT)
RETURNS TABLE (hash BYTEA, msg_offset BIGINT)
LANGUAGE plpgsql STABLE
SET jit = off
AS $$
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
       WHERE queen.log_txn_keys(t.partition_id, t.hashes) && ARRAY(SELECT int8send($1::BIGINT) || want.h FROM want)
         AND t.partition_id = $1 AND t.base_offset >= $3 AND t.base_offset <= $5
    )
    SELECT u.h, r.base_offset + u.idx
      FROM hit_rows r CROSS JOIN LATERAL queen.log_unnest_hashes(r.hashes) AS u
      JOIN want ON want.h = u.h
     WHERE r.base_offset + u.idx BETWEEN $4 AND $5
  $q$ USING p_partition, p_hashes, coalesce(v_first_row, p_from), p_from, p_to;
END
$$;
--> statement-breakpoint
-- For each hash k of p_hashes, the lowest offset in [p_from, p_until[k]] holding it (item k; none
-- when not found): the ids of an ack, after the cursor. p_from is at or above txns_start: below the
-- watermarks there are only dead index entries, never stepped back through.
CREATE OR REPLACE FUNCTION queen.resolve_txn_offsets(p_partition BIGINT, p_hashes BYTEA[], p_from BIGINT, p_until BIGINT[])
RETURNS TABLE (item INT, msg_offset BIGINT)
LANGUAGE plpgsql STABLE
-- Generic plans read p_hashes[k] and p_until[k] in place; see queen.ack.
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  n INT := coalesce(cardinality(p_hashes), 0);
  v_to BIGINT := (SELECT max(u.hi) FROM unnest(p_until) AS u(hi));
  v_first_row BIGINT;
BEGIN
  v_first_row := coalesce((SELECT t.base_offset FROM queen.log_txns t
                            WHERE t.partition_id = p_partition AND t.base_offset <= p_from
                            ORDER BY t.base_offset DESC LIMIT 1), p_from);
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
$$;
