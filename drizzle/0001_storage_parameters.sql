-- Churn tuning from the storage-model seed: every push updates its partition row and every pop/ack
-- its cursor row, so leave room for HOT updates, vacuum on a fixed threshold, and never truncate
-- the heap (truncation takes ACCESS EXCLUSIVE and stalls every push and pop behind it).
ALTER TABLE queen.log_partitions SET (
  fillfactor = 70,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 500,
  vacuum_truncate = off
);
--> statement-breakpoint
ALTER TABLE queen.log_consumers SET (
  fillfactor = 50,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 500,
  vacuum_truncate = off
);
--> statement-breakpoint
-- The broker already compressed these bytes; TOAST must not try again.
ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTERNAL;
--> statement-breakpoint
ALTER TABLE queen.log_dlq ALTER COLUMN payload SET STORAGE EXTERNAL;
--> statement-breakpoint
-- Explodes a 16-byte-stride hash blob into (idx, hash) rows, idx zero-based. Pure byte slicing,
-- inlinable by the planner.
CREATE OR REPLACE FUNCTION queen.log_unnest_hashes(p BYTEA)
RETURNS TABLE (idx INT, h BYTEA)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT i, substring(p FROM i * 16 + 1 FOR 16)
  FROM generate_series(0, length(p) / 16 - 1) AS i
$$;
