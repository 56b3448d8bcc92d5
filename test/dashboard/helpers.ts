// Rows and clocks of the per-minute rollup, for the dashboard suites: what the cron wrote, and the
// log's own truth to compare it with.
import type { Database } from '../../lib/db/types.js';

/** Pretends the rollup began `minutesAgo` minutes ago (last run then too), so older minutes count. */
export async function startStatsAt(db: Database, minutesAgo: number) {
  await db.query(
    `INSERT INTO queen.minute_stats_state (id, started_at, rolled_to, sampled_at)
     VALUES (true, date_trunc('minute', now()) - make_interval(mins => $1), date_trunc('minute', now()) - make_interval(mins => $1),
             now() - make_interval(mins => $1))
     ON CONFLICT (id) DO UPDATE SET started_at = EXCLUDED.started_at, rolled_to = EXCLUDED.rolled_to, sampled_at = EXCLUDED.sampled_at`,
    [minutesAgo],
  );
}

/** Moves every segment of a queue (or those matching `where`) to `minutesAgo` minutes before the current minute, +`second` s. */
export async function moveSegments(db: Database, queue: string, minutesAgo: number, second = 0, where = 'TRUE') {
  for (const table of ['log_segments', 'log_txns']) {
    await db.query(
      `UPDATE queen.${table} s SET created_at = date_trunc('minute', now()) - make_interval(mins => $2) + make_interval(secs => $3)
         FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
        WHERE s.partition_id = p.id AND q.name = $1 AND ${where}`,
      [queue, minutesAgo, second],
    );
  }
}

export interface StatsRow {
  minutesAgo: number;
  pushed_messages: number;
  pushed_segments: number;
  pushed_bytes: number;
  partitions_created: number;
  dlq_added: number;
  retention_messages: number;
  completed_retention_messages: number;
  eviction_messages: number;
  retention_events: number;
  sampled: boolean;
  partitions: number | null;
  held: number | null;
  lag_messages: number | null;
  in_flight: number | null;
  lagging_pairs: number | null;
  consumed_total: number | null;
  consumed: number | null;
}

/** The queue's rollup rows, oldest first, with every count as a number. */
export async function statsRows(db: Database, queue: string): Promise<StatsRow[]> {
  const rows = await db.query(
    `SELECT (extract(epoch FROM date_trunc('minute', now()) - m.bucket) / 60)::int AS "minutesAgo", m.*, m.sampled_at IS NOT NULL AS sampled
       FROM queen.queue_minute_stats m JOIN queen.queues q ON q.id = m.queue_id
      WHERE q.name = $1 ORDER BY m.bucket`,
    [queue],
  );
  return rows.map((r) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) {
      if (k === 'queue_id' || k === 'bucket' || k.endsWith('_at')) continue;
      out[k] = typeof v === 'string' ? Number(v) : v;
    }
    return out as unknown as StatsRow;
  });
}

/** Pushed messages, segments and compressed bytes per minute, straight from the log. */
export async function segmentsPerMinute(db: Database, queue: string) {
  const rows = await db.query<{ minutes_ago: number; messages: string; segments: string; bytes: string }>(
    `SELECT (extract(epoch FROM date_trunc('minute', now()) - date_trunc('minute', s.created_at)) / 60)::int AS minutes_ago,
            sum(s.end_offset - s.base_offset + 1) AS messages, count(*) AS segments, sum(octet_length(s.blob)) AS bytes
       FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id
      WHERE q.name = $1 GROUP BY 1 ORDER BY 1 DESC`,
    [queue],
  );
  return rows.map((r) => ({
    minutesAgo: Number(r.minutes_ago),
    messages: Number(r.messages),
    segments: Number(r.segments),
    bytes: Number(r.bytes),
  }));
}

/** Waits out the last seconds of a minute (PostgreSQL's clock), so a test's "this minute" stays one minute. */
export async function awayFromMinuteEnd(db: Database) {
  await db.query('SELECT pg_sleep(CASE WHEN extract(second FROM now()) >= 45 THEN 61 - extract(second FROM now()) ELSE 0 END)');
}

/**
 * Lets `minutes` minutes pass for the log and the rollup: every stored time moves back that much
 * (live leases excepted, so they stay live). The cron's next run then sees closed minutes.
 */
export async function letMinutesPass(db: Database, minutes: number) {
  const back = `- make_interval(mins => ${Number(minutes)})`;
  await db.query(
    `WITH moved AS (DELETE FROM queen.queue_minute_stats RETURNING *)
     INSERT INTO queen.queue_minute_stats
     SELECT queue_id, bucket ${back}, pushed_messages, pushed_segments, pushed_bytes, partitions_created, dlq_added,
            retention_messages, completed_retention_messages, eviction_messages, retention_events, sampled_at ${back},
            partitions, held, lag_messages, in_flight, lagging_pairs, oldest_unconsumed_at ${back}, mean_unconsumed_at ${back},
            consumed_total, consumed
       FROM moved`,
  );
  await db.query(
    `UPDATE queen.minute_stats_state SET started_at = started_at ${back}, rolled_to = rolled_to ${back}, sampled_at = sampled_at ${back}`,
  );
  for (const [table, columns] of [
    ['log_segments', ['created_at']],
    ['log_txns', ['created_at']],
    ['log_partitions', ['created_at', 'last_write_at']],
    ['log_dlq', ['created_at', 'failed_at']],
    ['consumer_subscriptions', ['subscribed_at', 'start_at', 'scanned_at']],
    ['queues', ['created_at', 'updated_at']],
  ] as const) {
    await db.query(`UPDATE queen.${table} SET ${columns.map((c) => `${c} = ${c} ${back}`).join(', ')}`);
  }
}
