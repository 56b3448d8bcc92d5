// The per-(queue, minute) rollup behind the dashboard's history (docs/semantics.md#figures). Only the retention
// cron writes it, so push, pop and ack pay nothing: pushes, new partitions and dead letters are
// recomputed from the log for closed minutes, gauges (lag, in flight, lifetime consumption) are
// sampled when they change, and what retention deleted is added by rule.
import type { Queryable } from '../db/types.js';

export interface RollupReport {
  skipped: boolean;
  /** The closed minutes recomputed, [from, to). */
  fromMinute: string | null;
  toMinute: string | null;
  /** Queues whose gauges were sampled. */
  samples: number;
  /** Rows older than a week removed. */
  removed: number;
}

export async function rollupMinuteStats(db: Queryable): Promise<RollupReport> {
  const [row] = await db.query<{ skipped: boolean; from_minute: Date | null; to_minute: Date | null; samples: number; removed: number }>(
    'SELECT skipped, from_minute, to_minute, samples, removed FROM queen.rollup_minute_stats()',
  );
  return {
    skipped: row!.skipped,
    fromMinute: row!.from_minute?.toISOString() ?? null,
    toMinute: row!.to_minute?.toISOString() ?? null,
    samples: Number(row!.samples),
    removed: Number(row!.removed),
  };
}

export interface RetainedByRule {
  queueId: string;
  partitions: number;
  retentionMessages: number;
  completedRetentionMessages: number;
  evictionMessages: number;
}

/** Adds what one retention run deleted, per queue and rule, to the current minute. */
export async function recordRetention(db: Queryable, queues: RetainedByRule[]): Promise<void> {
  const deleted = queues.filter((q) => q.retentionMessages + q.completedRetentionMessages + q.evictionMessages > 0);
  if (deleted.length === 0) return;
  const sql = `SELECT queen.record_retention(p_queues => $1::bigint[], p_time => $2::bigint[], p_completed => $3::bigint[],
                                             p_eviction => $4::bigint[], p_partitions => $5::int[])`;
  await db.query(sql, [
    deleted.map((q) => q.queueId),
    deleted.map((q) => q.retentionMessages),
    deleted.map((q) => q.completedRetentionMessages),
    deleted.map((q) => q.evictionMessages),
    deleted.map((q) => q.partitions),
  ]);
}
