// The retention job (docs/semantics.md#retention): finds the partitions with work (two primary-key
// probes each), then retains each in its own short statements of at most `segmentsPerStatement`
// segments, so no transaction spans the run and a partition row is locked only from its watermark
// update to commit. Overlapping runs skip each other's partitions (a per-partition advisory lock);
// a run is idempotent. Each run first rolls up the per-minute figures (before it deletes what they
// count), and records what each rule deleted.
import type { Database } from '../db/types.js';
import { purgeAttempts } from './delivery/attempts.js';
import { purgeTraces } from './traces.js';
import { recordRetention, rollupMinuteStats, type RollupReport } from './minute-stats.js';

export interface QueueRetention {
  tenant: string;
  queue: string;
  queueId: string;
  partitions: number;
  segmentsDeleted: number;
  messagesDeleted: number;
  /** messagesDeleted split by the rule that allowed it: retentionSeconds, completedRetentionSeconds, maxWaitTimeSeconds. */
  retentionMessages: number;
  completedRetentionMessages: number;
  evictionMessages: number;
  sidecarRowsPurged: number;
}

export interface RetentionReport {
  partitionsExamined: number;
  partitionsSkipped: number;
  segmentsDeleted: number;
  messagesDeleted: number;
  sidecarRowsPurged: number;
  queues: QueueRetention[];
  tracesDeleted: number;
  /** Delivery attempts older than a week (docs/delivery.md). */
  attemptsDeleted: number;
  stats: RollupReport | null;
}

export interface RetentionOptions {
  /** Segments (and sidecar rows) one statement may delete; a longer prefix takes several. */
  segmentsPerStatement?: number;
  /** Partitions retained concurrently. */
  parallel?: number;
}

const queueKey = (tenant: string, queue: string) => `${tenant}\u0000${queue}`;

export async function runRetention(db: Database, options: RetentionOptions = {}): Promise<RetentionReport> {
  const perStatement = options.segmentsPerStatement ?? 10_000;
  const parallel = options.parallel ?? 4;
  // The rollup counts what retention is about to delete, so it goes first; but a failing rollup
  // must never stop retention: its error is thrown once retention has done its work.
  let stats: RollupReport | null = null;
  let rollupFailure: unknown = null;
  try {
    stats = await rollupMinuteStats(db);
  } catch (err) {
    rollupFailure = err;
  }
  const candidates = await db.query<{ partition_id: string; tenant: string; queue: string }>(
    'SELECT partition_id, tenant, queue FROM queen.retention_candidates()',
  );
  const report: RetentionReport = {
    partitionsExamined: candidates.length,
    partitionsSkipped: 0,
    segmentsDeleted: 0,
    messagesDeleted: 0,
    sidecarRowsPurged: 0,
    queues: [],
    tracesDeleted: 0,
    attemptsDeleted: 0,
    stats,
  };
  const perQueue = new Map<string, QueueRetention>();
  // Partitions whose segments were deleted, per queue: the rollup's retention events.
  const retainedPartitions = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const c = candidates[next++]!;
      let queueId = '';
      let segments = 0;
      let sidecars = 0;
      const byRule = { messages: 0, time: 0, completed: 0, eviction: 0 };
      for (;;) {
        const [row] = await db.query<{
          queue_id: string;
          skipped: boolean;
          segments: string;
          messages: string;
          time_messages: string;
          completed_messages: string;
          eviction_messages: string;
          sidecars: string;
          more: boolean;
        }>(
          `SELECT queue_id, skipped, segments, messages, time_messages, completed_messages, eviction_messages, sidecars, more
             FROM queen.retain_partition(p_partition => $1, p_max_segments => $2)`,
          [c.partition_id, perStatement],
        );
        if (!row) break;
        if (row.skipped) {
          report.partitionsSkipped++;
          break;
        }
        queueId = String(row.queue_id);
        segments += Number(row.segments);
        sidecars += Number(row.sidecars);
        byRule.messages += Number(row.messages);
        byRule.time += Number(row.time_messages);
        byRule.completed += Number(row.completed_messages);
        byRule.eviction += Number(row.eviction_messages);
        if (!row.more) break;
      }
      if (segments + sidecars === 0) continue;
      const key = queueKey(c.tenant, c.queue);
      let q = perQueue.get(key);
      if (!q) {
        q = {
          tenant: c.tenant,
          queue: c.queue,
          queueId,
          partitions: 0,
          segmentsDeleted: 0,
          messagesDeleted: 0,
          retentionMessages: 0,
          completedRetentionMessages: 0,
          evictionMessages: 0,
          sidecarRowsPurged: 0,
        };
        perQueue.set(key, q);
      }
      q.partitions++;
      if (segments > 0) retainedPartitions.set(key, (retainedPartitions.get(key) ?? 0) + 1);
      q.segmentsDeleted += segments;
      q.messagesDeleted += byRule.messages;
      q.retentionMessages += byRule.time;
      q.completedRetentionMessages += byRule.completed;
      q.evictionMessages += byRule.eviction;
      q.sidecarRowsPurged += sidecars;
      report.segmentsDeleted += segments;
      report.messagesDeleted += byRule.messages;
      report.sidecarRowsPurged += sidecars;
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, candidates.length) }, worker));
  report.tracesDeleted = await purgeTraces(db);
  report.attemptsDeleted = await purgeAttempts(db);
  report.queues = [...perQueue.values()].sort((a, b) => (a.tenant + a.queue < b.tenant + b.queue ? -1 : 1));
  await recordRetention(
    db,
    report.queues.map((q) => ({ ...q, partitions: retainedPartitions.get(queueKey(q.tenant, q.queue)) ?? 0 })),
  );
  if (rollupFailure) throw rollupFailure;
  return report;
}
