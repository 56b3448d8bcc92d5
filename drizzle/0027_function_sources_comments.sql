-- Written by `npm run db:migration` from sql/functions/: read the change there.
COMMENT ON FUNCTION queen.ack(text,integer[],bigint[],text[],bytea[],bigint[],text[],text[],text[],text[],bigint[],bigint[],uuid[],text[],uuid[],text[],bytea[],boolean[],timestamp with time zone[]) IS 'Ack, one call for any number of items (SPEC §3.3, §3.5): queen.ack_cursor for each cursor
(partition, group) of the items, in (partition, group) order, so two acks lock cursors in the
same order (docs/locking.md). p_required_leases: a transaction''s leases, for its acks that carry
no leaseId.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.ack_cursor(text,bigint,text,integer[],bytea[],bigint[],text[],text[],text[],text[],bigint[],bigint[],uuid[],text[],uuid[],text[],bytea[],boolean[],timestamp with time zone[]) IS 'The items of one cursor (partition p_partition, group p_group), numbered 1..n here; p_idx maps
them back to the request. Locks the cursor, authorises each item, resolves transactionId ->
offset, then moves the cursor once: highest completed offset clamped below the lowest
non-completed signal F (dlq > failed > retry at equal offsets), then applies F.

Authorisation: an item''s leaseId, or (a transaction''s ack without one) the live lease when it is
in p_required_leases, must be the live lease; then the item may resolve in (committed, batch_end].
No lease at all: allowed while no lease is live, over (committed, last_offset]. Whatever the
lease, an item at or below the cursor is a no-op success (already_committed): a retried ack
whose answer was lost. A refused item gets its refusal only if it is not found there.

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
COMMENT ON FUNCTION queen.extend_lease(text,text,integer) IS 'Lease extend (SPEC §3.4): expiry = max(current, now + seconds) on every live lease with this id.
worker_id has no index on purpose (every pop rewrites it; an index would make those updates
non-HOT); extend is a rare call and scans the tenant''s cursors.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.log_consumers_fill_queue() IS 'Cursor rows created by other paths (seek) get their queue_id here; a cursor moved backwards has
something to deliver again. Both fire rarely: inserts are once per (partition, group), and the
WHEN clause is evaluated without entering plpgsql.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.log_consumers_rewound() IS 'A cursor moved backwards (seek, DLQ retry) has something to deliver again: the wildcard scan
finds it by its pending flag.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.offset_at_time(bigint,timestamp with time zone) IS 'The first offset whose segment was created at or after p_ts, or last_offset + 1. created_at is
monotone in base_offset (seed invariant 2), so "created_at of the first segment at or after x"
is monotone in x and a binary search of forward steps on the primary key finds it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.segment_time_at(bigint,bigint) IS 'Creation time of the segment holding offset p_offset (or the nearest one before it): one
backward step on the primary key.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.seek_consumer_group(text,text,text,boolean,timestamp with time zone,text,bigint) IS 'Moves one group''s cursors on a queue (SPEC §3.7): to the end, to a timestamp, or to an offset of
one partition. Creates missing cursor rows, clears leases and resets retry/attempt counters.
Returns NULL when the queue does not exist, ''[]'' when the named partition does not.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.delete_consumer_group(text,text,text,boolean) IS 'Removes a group''s cursors on one queue or, with p_queue NULL, on every queue of the tenant, and
its subscriptions unless p_metadata is false. A kept subscription starts over from its start
point, so its scan mark goes back there too (else the wildcard pop would skip old partitions
that now have no cursor). Returns how many cursor and subscription rows went.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.update_subscription(text,text,timestamp with time zone) IS 'POST /consumer-groups/:group/subscription: every subscription of the group in the tenant starts
at p_ts from now on (existing cursors stay). The wildcard pop considers partitions written
since the scan mark (minus slack) plus flagged cursors, so the mark is lowered to p_ts: a
partition without a cursor that holds messages from p_ts on was written since. NULL (never
scanned: every partition is a candidate) stays NULL.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.list_consumer_groups(text,text) IS 'GET /consumer-groups: Queen''s get_consumer_groups_v4 keys, one element per (group, queue), with
true figures (totalLag summed, maxTimeLag the oldest unconsumed message''s age), plus ours.
state: Lagging past 5 minutes of backlog, else Stable once the group has consumed anything.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.consumer_group_detail(text,text) IS 'GET /consumer-groups/:group: Queen''s object keyed by queue name; {} for an unknown group.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.group_partitions(text,text,text) IS 'One row per (group, partition) of the tenant''s queues. Lag is last_offset - max(committed,
log_start - 1) (SPEC §4); oldest is the creation time of the segment holding the next wanted
offset, age its age in whole seconds (0 when caught up).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.partition_groups(bigint) IS 'Every group reading one partition: its cursor, or, for a group subscribed to the queue with no
cursor there yet, where its first pop would start (last_write_at is quantized and stamped before
commit, hence the slack before treating the partition as untouched since the start). Lease
columns only while the lease is live.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.lagging_partitions(text,bigint) IS 'GET /consumer-groups/lagging: every (group, partition) whose oldest unconsumed message is older
than p_min_lag_seconds, oldest first.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.serverless_note() IS 'What the dashboard''s worker, request and history figures mean in a deployment without
long-lived workers, sent beside them.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.time_range(timestamp with time zone,timestamp with time zone) IS 'A window as the status routes answer it: ISO 8601 UTC ends.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.stats_window(timestamp with time zone,timestamp with time zone,interval) IS 'The window of a time-series route: [from, to), to defaulting to now and from to `p_default` before to.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.per_second(bigint,integer) IS 'A bucket''s count as a rate per second, rounded to hundredths; p_width is in minutes.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_counts(numeric,numeric,numeric,numeric) IS 'The parts of a message count Queen''s pages show: held in the log, of which pending (no group
has it yet, in Queen''s sense: minus leased), processing (leased), dead-lettered, and the rest
completed (every group is past it). failed is not counted by anything.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_queue_lag(text,timestamp with time zone,timestamp with time zone,text) IS 'GET /api/v1/analytics/queue-lag (get_queue_lag_v1): a bare array, per queue and minute, newest first.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_queue_ops(text,timestamp with time zone,timestamp with time zone,text) IS 'GET /api/v1/analytics/queue-ops (get_queue_ops_v1): per queue and bucket, oldest first. ackSuccess
is what the cursors advanced (completed acks, autoAck pops, dead-lettered skips).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_retention(text,timestamp with time zone,timestamp with time zone,text) IS 'GET /api/v1/analytics/retention (get_retention_timeseries_v1): buckets with deletions, oldest first.
eventCount counts partitions retained.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.analytics_worker_metrics(text,timestamp with time zone,timestamp with time zone) IS 'GET /api/v1/analytics/worker-metrics (get_worker_metrics_timeseries_v1): the tenant-wide series in
Queen''s worker shape, with every per-worker and per-request figure null and no workers.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.dashboard_status(text,timestamp with time zone,timestamp with time zone,text,text,text) IS 'GET /api/v1/status (Queen''s get_status_v3 shape). Throughput newest first.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.dashboard_status_analytics(text,timestamp with time zone,timestamp with time zone,text,text,text,text) IS 'GET /api/v1/status/analytics: messages pushed per minute, hour or day over the window (default
24 h); null for a bucket the rollup did not cover.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.dashboard_status_queue(text,text) IS 'GET /api/v1/status/queues/:queue (get_queue_detail_v2); NULL when the tenant has no such queue.
lastActivity is the last delivery (a pop), oldestMessage the oldest message the slowest reader
has not consumed. JSON rather than JSONB: for 10,000 partitions building JSONB took three
times as long.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.dashboard_status_queues(text,text,text,text,integer,integer) IS 'GET /api/v1/status/queues (get_status_queues_v2): newest queue first; pending here includes the
leased messages, as Queen''s does.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.txn_key(bigint,bytea) IS 'Dedup keys of 64 bits instead of 24 bytes (docs/storage.md#the-duplicate-probe). The GIN index on
the sidecar held one (partition || hash) bytea of 24 bytes per message: 75 of the 151 bytes a
message cost at batch 100, and every probe and insert compared varlena keys. A key is now the
hash''s first 64 bits XOR the partition id, an int8: the index shrinks, its comparisons are
integer compares, and a match is still decided on the full 128-bit hash in the sidecar row
(every reader below already joined on it). A false match costs a row read, never a wrong answer.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.log_txn_keys64(bigint,bytea) IS 'The dedup keys of a sidecar row''s hashes, for rows written without stored keys (before they were
stored, or by a previous release): the GIN index''s expression falls back to it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.log_unnest_hashes(bytea) IS 'Explodes a 16-byte-stride hash blob into (idx, hash) rows, idx zero-based. Pure byte slicing,
inlinable by the planner.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.find_txn_offsets(bigint,bytea[],bigint,bigint) IS 'Every offset in [p_from, p_to] of the partition whose sidecar hash is one of p_hashes, through the
dedup GIN index (docs/storage.md#the-duplicate-probe). The one place an ack by transactionId
reads that index, never the whole partition (HARD-PARTS §5): the cost follows the rows holding a
key, not the length of the range. EXECUTE plans it with the values: a cached generic plan would
rather walk the range on the primary key and compute every row''s keys.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.resolve_txn_offsets(bigint,bytea[],bigint,bigint[]) IS 'For each hash k of p_hashes, the lowest offset in [p_from, p_until[k]] holding it (item k; none
when not found): the ids of an ack, after the cursor. p_from is at or above txns_start: below the
watermarks there are only dead index entries, never stepped back through.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_offset(bigint,bytea,text) IS 'Message traces (SPEC §3.8b; Queen''s POST /api/v1/traces and its three readers), per tenant.
The offset of a transactionId in a partition: the lowest live offset whose sidecar hash matches
(through the GIN index of the push migration), else the lowest DLQ copy; NULL when neither knows it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.delivery_claim(bigint[],integer,bigint) IS 'Claims due partitions of active subscriptions for the dispatcher (docs/delivery.md#dispatch): per
subscription, under its row lock (so concurrent dispatchers never pass maxInFlight together),
one queen.pop of one partition per free slot, budgeted by the rateLimit bucket. A partition with
an outstanding batch (a failure, a throttle, a dispatcher that died) is claimed over exactly that
range again, with its webhook-id. The lease is the subscription''s timeoutMs + 5 s.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.delivery_settle(text,uuid,text,bigint,text,text,bigint,bigint,integer,text,bigint,integer,text,integer,text,bigint[],text[],text[],bigint[],uuid[],text[],uuid[],text[],bytea[],boolean[],timestamp with time zone[]) IS 'Settles one sent batch in one statement (docs/delivery.md#the-answer): the ack the endpoint''s
answer means (queen.ack_cursor, so the ack rules, retry budget and DLQ are the broker''s own),
the back-off of a failure or a throttle, the outstanding batch kept for a resend or cleared,
the attempt''s log row, and the subscription''s counters and state. Nothing moves when the claim''s
lease was lost (expired and taken): that batch is sent again under its webhook-id.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.bucket_key(timestamp with time zone) IS 'A bucket''s key on the wire: UTC, no fraction, the same format in every row.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.bucket_minutes(timestamp with time zone,timestamp with time zone) IS 'Bucket width from the window, as Queen chooses it: up to 1 h 1 min, 6 h 5 min, 24 h 15 min, 7 d 60 min, else 6 h.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.bucket_start(timestamp with time zone,integer) IS 'Buckets are multiples of their width since the epoch: aligned to the hour, 6-hour ones to midnight UTC.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.stats_buckets(timestamp with time zone,timestamp with time zone,integer) IS 'The buckets of a window that the rollup has covered: from its first run to the last closed minute
it recomputed; later ones are not known yet. asof is the instant a bucket''s gauges are read at:
its end, or the last sample when that is earlier.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.tenant_queue_ids(text,text,text,text) IS 'The ids of the tenant''s queues a status or analytics filter selects, in id order.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.lag_at(bigint,timestamp with time zone) IS 'A queue''s gauges at instant p_t, from its last sample at or before it: samples are written when
something changed, so until the next one the oldest unconsumed message is the same and the lag
is p_t minus its time. NULL before the queue''s first sample.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.lagging_queues(bigint[],timestamp with time zone,timestamp with time zone) IS 'The queues that had lag at some point of [p_from, p_to): the others need no lag lookups.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.queue_series(bigint[],timestamp with time zone,timestamp with time zone,integer) IS 'Per queue and covered bucket, only where something happened or the queue lagged: pushes,
consumption, new partitions, and the partitions and lag at the bucket''s end.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.retention_series(bigint[],timestamp with time zone,timestamp with time zone,integer) IS 'What retention deleted per bucket and rule, only buckets with deletions; retention writes into
the current minute, so the window runs to p_to.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.tenant_series(bigint[],timestamp with time zone,timestamp with time zone,integer) IS 'Every covered bucket of the window for a set of queues together: pushes, segments, consumption,
dead letters, and the lag across their lagging (partition, group) positions at the bucket''s end
(mean weighted by positions, and max). Zero where nothing happened.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_marks(bigint) IS 'The message browser (SPEC §3.8b: Queen''s GET /api/v1/messages) and the message-level status the
list and the detail share. SQL never decompresses: it picks the segments a page needs and the
broker decodes only those.
Where a message''s status changes along a partition''s offsets, Queen''s rule: the queue-mode
cursor decides when the partition has one (completed up to its cursor, processing up to its
live lease''s end); otherwise completed once every named group has passed it. Offsets above
processing_to are pending; a message with any DLQ row is dead_letter whatever its offset.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.list_messages(text,text,text,text,text,text,timestamp with time zone,timestamp with time zone,integer) IS 'GET /messages: the segments one page needs, newest first, and a ''mode'' row summarising the
groups of every partition with messages in the window: from p_from (default an hour ago) to
the end of p_to''s minute (default now), as Queen rounds it. A partition''s window is the offset
range [lo, hi) of its segments created in it (created_at is monotone in offset, seed invariant 2),
narrowed to [a, b] where the status filter can match. Per partition at most p_need segments
are taken, each holding at least one matching message, scanning backwards on the primary key;
then, across partitions, segments are taken newest first until p_need matching messages are
covered (p_need = offset + limit). Dead letters are found from their DLQ rows.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.metrics_totals(text) IS '/metrics (JSON): lifetime pushes of the tenant and their rate over the rollup''s last five closed minutes.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.metrics_snapshot(text,integer,boolean) IS 'Everything one scrape shows for a tenant. Per queue: partitions, held and lifetime messages,
dead letters, live segments and their compressed bytes (a read of every live segment row''s
length, never its blob), sidecar hash bytes (16 per message from txns_start), and pushes in the
last closed minute of the rollup. Per (queue, group): lag, oldest unconsumed age, in flight,
leased partitions, lifetime consumption. Per partition only while the tenant has at most
p_partition_limit of them. Table sizes are database-wide: only when p_database is true. JSON,
not JSONB: it is built per partition and read once.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.postgres_stats() IS 'PostgreSQL''s own statistics for the queen schema (database-wide, so for admins): cache hit
ratios, dead tuples, HOT updates, autovacuum, long-running statements, buffer settings and
usage (pg_buffercache only when installed), and table sizes.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.cursor_start(bigint,timestamp with time zone) IS 'Where a new cursor starts for a subscription: -1 (from the beginning) or the end of the last
segment created before start_at. A backward step on the primary key from the newest segment:
for a `new` group it walks only what arrived after it subscribed.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.pop(text,text,text,text,text,text,integer,integer,text,boolean,text,timestamp with time zone,bigint) IS 'The whole pop in one call. Named partition, wildcard (p_partition NULL) or discovery (p_queue
NULL: every queue of the tenant matching namespace/task). Returns the claimed partitions'' whole
segment rows in claim order; the broker decodes and slices [from_offset, batch_end]. A named pop
finds its queue with one index probe; ensure_queue runs only when the queue does not exist yet.

The wildcard scan (docs/locking.md#the-wildcard-scan, HARD-PARTS §2), never the whole queue: a
pop''s cost is bounded by the partitions written since the group last looked plus the cursors it
walks before its batch is full. Phase 1 marks every partition written since the group''s scan
mark that the group has not seen (a new cursor, or pending = true), so an old backlog stays
findable however long the group stays away; phase 2 walks the group''s pending cursors least
recently served first, in index order, and stops once the batch is full. The scan mark is the
start of the oldest transaction open when the scan began: a write this scan cannot see belongs to
a transaction that started after it, and its partition''s last_write_at (push keeps it within a
second of its transaction''s start) is at or after it. The mark never lags more than two minutes:
the oldest open transaction may belong to anyone, and no push statement runs that long. The mark
reads pg_stat_activity only when it could move (about once a second per group). A new group
starts with no mark: its first wildcard pop visits the queue once (from the beginning) or the
partitions written since it subscribed (`new`, timestamp).

Waits: the cursor inserts of phase 1 run in partition order, every other lock a pop takes is
SKIP LOCKED, so two pops never wait on each other in a cycle. pop_claim inherits this function''s
enable_seqscan = off and is called as a plpgsql expression (no executor start per claim).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.pop_claim(queen.queues,bigint,text,timestamp with time zone,integer,text,boolean,bigint,boolean,timestamp with time zone) IS 'Claims one partition for a group: locks (or creates) its cursor row without waiting (a locked
cursor is skipped, never waited for), checks the lease, retryDelay, windowBuffer and
delayedProcessing, walks the segments after the cursor until the message budget (or the byte
budget) is spent and leases exactly (committed, batch_end].
status: claimed | locked (another pop or ack holds the row) | busy (live lease, retry delay) |
empty (caught up) | held (has messages, not deliverable yet).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.pop_shrink(text,text,text,bigint[],bigint[],bigint[],bigint[]) IS 'The rare paths where the broker returned less than it leased (the response cap), or nothing at
all (the response could not be built: a wrong encryption key, a corrupt segment): each claimed
partition''s lease ends at what was delivered (p_ends; NULL = nothing delivered: lease released,
and the attempt it counted is taken back). Guarded by the lease id, or for autoAck by the
cursor still being where the pop put it.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.ensure_queue(text,text) IS 'A queue named on first use, with the defaults of an implicitly created queue (lease 60 s, dedup
3600 s; namespace/task split at the first ''.''). Race-safe: the loser of a concurrent insert
waits for the winner''s commit, then reads its row.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.ensure_partition(bigint,text) IS 'A partition named on first use. Race-safe: the loser of a concurrent insert reads the winner''s row.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.push_segments(text,text[],text[],integer[],integer[],bytea,bytea,boolean[],boolean[],integer[],integer[]) IS 'A previous release''s push, during a deploy (docs/operations.md#rolling-back): the same function,
the keys computed here.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.push_segments(text,text[],text[],integer[],integer[],bytea,bytea,boolean[],boolean[],integer[],integer[],bigint[]) IS 'Writes one segment + one sidecar row per group (one group = one (queue, partition)), or writes
nothing and says why, so the broker can fix the request and call again:
  ''ok''      grp, partition_id, base_offset          every group was written
  ''dup''     grp, item, partition_id, msg_offset, base_offset
            item (0-based within the group''s frames) repeats a transactionId already stored
            inside the queue''s dedup window at msg_offset, in the segment based at base_offset
  ''seg''     partition_id, base_offset, blob         that segment, to read original message ids
  ''encrypt'' grp     the queue has encryptionEnabled and the group was sent in plaintext
  ''plain''   grp     the queue stores plaintext and the group was sent encrypted
  ''expand''  grp     the queue has dedup off, but the broker collapsed repeated keys
Only the frames listed in p_probe_grp/p_probe_item (0-based) are probed: the broker leaves out
frames whose transactionId is the message id it just minted, which nothing can repeat.
Locks the partitions in id order (no deadlock between multi-partition pushes), probes only
after the lock (a concurrent pusher of the same key has committed by then), and stamps
created_at after the lock (created_at monotone per partition in commit order).
New queues and partitions are made in name order.

p_keys: each message''s key before the partition is mixed in, in the order of p_hashes; NULL (a
previous release''s call) computes them here. A single-partition push that needs no probe
(no client transactionId) is one executor start: lock, allocate and write in one statement; with
a probe, two: the lock, then the probe and the write in one statement that sees every push which
held the lock before (docs/locking.md#the-order). Anything else takes the general path.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.queue_options(queen.queues) IS 'Every SPEC §3.6 option of a queue row, as the wire names them.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.configure_queue(text,text,text,text,jsonb) IS 'Upsert with merge semantics: a sent option overwrites, an omitted one keeps its stored value, or
takes the default when this call creates the queue (leaseTime 300 there, SPEC §3.6).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.describe_queue(text,text) IS 'GET /resources/queues/:queue: ours (watermarks, per-group committed and lag) plus Queen''s
get_queue_v2 keys (per-partition stats, oldest and newest message times, queue totals).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.delete_queue(text,text) IS 'log_txns has no foreign key (seed), so its rows go explicitly. The queue row is locked first so
no partition can be created under it while the cascade runs.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.list_queues(text,text,text) IS 'GET /resources/queues: Queen''s messages {total, pending, processing} (pending without in-flight), plus completed.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.admin_iso(timestamp with time zone) IS 'Timestamps leave as ISO 8601 UTC text whatever the session''s TimeZone.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.figures_json(bigint,bigint,bigint,bigint,bigint) IS 'Queen''s message-count object; failed is always null (nothing counts it).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.spread_json(bigint[]) IS 'avg, median, min and max of a set of figures, rounded to hundredths; all 0 for an empty set.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.group_positions(bigint[]) IS 'Every (partition, consumer group) position on the given queues: the cursor rows, plus each
subscribed group on the partitions it has no cursor on yet, placed where its first pop would
start (SPEC §3.2). Lag is last_offset - max(committed, log_start - 1): gaps are not lag (SPEC
§4). `since` is when the oldest message it has not consumed was pushed (the segment holding its
next wanted offset: one backward step on the primary key, inline, as a function call costs
several times the probe), NULL when it has nothing to consume.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.partition_figures(text,text) IS 'Queue resources with Queen''s figures (SPEC §3.7, §3.8b): per partition, the messages held and how
they split between done, in flight and pending; the overview. All computed from the log per call.
done: the held offsets every group with a cursor has committed past; processing: the largest
live lease on the partition, within what is not done; pending: the rest. total = completed +
processing + pending; deadLetter counts the partition''s DLQ rows (a dead letter is also done).

Per partition, now: held messages; the lag of its slowest position (every held message when
nobody reads it), split into leased (processing) and the rest (pending); dead letters; lifetime
pushes; the cursors'' lifetime consumption; over its lagging positions their summed lag, count,
oldest unconsumed time and the sum of those times (for a mean); and the last delivery.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.partition_figures(bigint[]) IS 'Queue resources with Queen''s figures (SPEC §3.7, §3.8b): per partition, the messages held and how
they split between done, in flight and pending; the overview. All computed from the log per call.
done: the held offsets every group with a cursor has committed past; processing: the largest
live lease on the partition, within what is not done; pending: the rest. total = completed +
processing + pending; deadLetter counts the partition''s DLQ rows (a dead letter is also done).

Per partition, now: held messages; the lag of its slowest position (every held message when
nobody reads it), split into leased (processing) and the rest (pending); dead letters; lifetime
pushes; the cursors'' lifetime consumption; over its lagging positions their summed lag, count,
oldest unconsumed time and the sum of those times (for a mean); and the last delivery.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.queue_figures(bigint[]) IS 'partition_figures summed per queue (queues without partitions too); the mean unconsumed time is
over the lagging positions, to the millisecond so that unchanged figures compare equal.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.resources_overview(text) IS 'GET /resources/overview (Queen''s get_system_overview_v3 keys). Lag figures are over the
(group, partition) pairs with a backlog; ingestedPerSecond is the messages whose segments were
written in the last 5 minutes, over 300 s (offsets are contiguous there, and only a partition
written since, less the last_write_at slack, can hold any). No hot-path counter exists for
acks, so processedPerSecond and failed are null.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.retention_candidates() IS 'Partitions retention has work on: the first live segment is older than a window that applies,
or the first sidecar row is older than the purge window. Two primary-key probes per partition.
A partition whose first live segment is older than maxWaitTimeSeconds has work too.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.retain_partition(bigint,integer) IS 'Retention of one partition, in its own short transaction (SPEC §4): deletes the longest prefix of
whole segments that time retention or completed retention allows, at most p_max_segments of
them (`more` says a further call has work), and purges the sidecar on its own clock. log_start
moves to the first surviving segment (seed invariant 3), txns_start likewise; both in one
UPDATE at the end, so the partition row (the push serializer) is locked only until commit.
Completed retention keeps every segment some subscribed group has not committed past, and the
whole partition while a subscribed group has no cursor on it. A concurrent run holding the
partition''s advisory lock makes this one skip it.
Queen''s maxWaitTimeSeconds evicts what waited longer than that, consumed or not: here the prefix of
segments older than it goes. A segment counts for time retention when that rule allows it, else
for completed retention when every subscribed group is past it, else for eviction.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.record_retention(bigint[],bigint[],bigint[],bigint[],integer[]) IS 'What one retention run deleted per queue, by rule, added to the current minute (S4).';
--> statement-breakpoint
COMMENT ON FUNCTION queen.rollup_minute_stats(interval) IS 'The per-minute rollup (run by the retention cron, before retention deletes what it counts).
Closed minutes since the last run (plus three, for pushes that committed late) are recomputed
from the log: pushes from segment created_at (monotone in base_offset, seed invariant 2, so one
range scan per recently written partition), partitions from created_at, dead letters from
failed_at. GREATEST keeps a count that retention, a DLQ retry or delete lowered since. Then
each queue''s gauges are sampled into the current minute when they changed (or every six hours
while it has partitions), and rows older than p_keep go. Overlapping runs skip, and so does a run
that races a queue''s deletion.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.record_trace(text,uuid,bigint,text,bytea,text,text,jsonb,text[]) IS 'Stores one trace and its names; no row when the partition is not the tenant''s. The queue row is
key-share locked so a concurrent queue delete either waits or makes this a "not found".';
--> statement-breakpoint
COMMENT ON FUNCTION queen.trace_json(queen.message_traces) IS 'One trace as the readers answer it: Queen''s snake_case keys; worker_id is always null (no
long-lived workers) and offset is ours.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.trace_names(text,integer,integer) IS 'GET /traces/names: the tenant''s trace names, most recently seen first, with how many traces and
how many distinct messages carry each.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.traces_by_name(text,text,integer,integer) IS 'GET /traces/by-name/:name: one page, oldest first, with the queue and partition names; total
counts every trace carrying the name. The message payload would need a segment decode per row:
message_payload is null.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.message_traces_of(text,bigint,text) IS 'GET /traces/:partitionId/:transactionId: oldest first; [] for an unknown or another tenant''s partition.';
--> statement-breakpoint
COMMENT ON FUNCTION queen.purge_traces(integer,integer) IS 'Retention: deletes at most p_limit traces older than p_max_age_seconds (their names cascade),
oldest first through the created_at index; returns how many went.';
