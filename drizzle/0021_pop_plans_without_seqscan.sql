-- A pop reads through indexes only (docs/locking.md#the-wildcard-scan), whatever the statistics say.
-- With autovacuum late or off, a table analyzed while it was small (log_consumers with a few rows)
-- keeps its estimate while it grows to thousands of cursors, and the plans a connection caches for
-- the pop's statements turned into sequential scans: bench/targets.ts measured the wildcard pop on
-- a 1-partition queue at 8.3 ms instead of 3.0 right after a fill, until an ANALYZE. push_segments
-- already pins its plans the same way.
ALTER FUNCTION queen.pop(text, text, text, text, text, text, integer, integer, text, boolean, text, timestamp with time zone, bigint) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION queen.pop_claim(queen.queues, bigint, text, timestamp with time zone, integer, text, boolean, bigint, boolean, timestamp with time zone) SET enable_seqscan = off;
