// The retention job (SPEC §4): finds the partitions with work (two primary-key probes each), then
// retains each in its own short statements of at most `segmentsPerStatement` segments, so no
// transaction spans the run and a partition row is locked only from its watermark update to
// commit. Overlapping runs skip each other's partitions (a per-partition advisory lock); a run
// is idempotent.
import type { Database } from '../db/types.js';
import { purgeTraces } from './traces.js';

export interface QueueRetention {
  tenant: string;
  queue: string;
  partitions: number;
  segmentsDeleted: number;
  messagesDeleted: number;
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
}

export interface RetentionOptions {
  /** Segments (and sidecar rows) one statement may delete; a longer prefix takes several. */
  segmentsPerStatement?: number;
  /** Partitions retained concurrently. */
  parallel?: number;
}

export async function runRetention(db: Database, options: RetentionOptions = {}): Promise<RetentionReport> {
  const perStatement = options.segmentsPerStatement ?? 10_000;
  const parallel = options.parallel ?? 4;
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
  };
  const perQueue = new Map<string, QueueRetention>();
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const c = candidates[next++]!;
      let segments = 0;
      let messages = 0;
      let sidecars = 0;
      for (;;) {
        const [row] = await db.query<{ skipped: boolean; segments: string; messages: string; sidecars: string; more: boolean }>(
          'SELECT skipped, segments, messages, sidecars, more FROM queen.retain_partition($1, $2)',
          [c.partition_id, perStatement],
        );
        if (!row) break;
        if (row.skipped) {
          report.partitionsSkipped++;
          break;
        }
        segments += Number(row.segments);
        messages += Number(row.messages);
        sidecars += Number(row.sidecars);
        if (!row.more) break;
      }
      if (segments + sidecars === 0) continue;
      const key = `${c.tenant}\u0000${c.queue}`;
      let q = perQueue.get(key);
      if (!q) {
        q = { tenant: c.tenant, queue: c.queue, partitions: 0, segmentsDeleted: 0, messagesDeleted: 0, sidecarRowsPurged: 0 };
        perQueue.set(key, q);
      }
      q.partitions++;
      q.segmentsDeleted += segments;
      q.messagesDeleted += messages;
      q.sidecarRowsPurged += sidecars;
      report.segmentsDeleted += segments;
      report.messagesDeleted += messages;
      report.sidecarRowsPurged += sidecars;
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, candidates.length) }, worker));
  report.tracesDeleted = await purgeTraces(db);
  report.queues = [...perQueue.values()].sort((a, b) => (a.tenant + a.queue < b.tenant + b.queue ? -1 : 1));
  return report;
}
