// Seek (docs/semantics.md#consumer-groups-and-seek): move one group's cursors on a queue to the
// end, to a timestamp, or to an offset of one partition, or one partition's cursor to its end (the
// dashboard's "Skip to end"). Backwards is allowed and replays; leases and retry counters are
// cleared. Answers Queen's keys and ours.
import type { Queryable } from '../db/types.js';
import { notFound } from '../errors.js';
import type { TenantContext } from './context.js';
import { queueNotFound } from './queues.js';

export type SeekTarget =
  { kind: 'end'; partition?: string } | { kind: 'timestamp'; timestamp: string } | { kind: 'offset'; offset: number; partition: string };

type Moved = { partitionId: string; partition: string; committed: number; nextOffset: number };

export interface SeekResult {
  success: true;
  consumerGroup: string;
  queueName: string;
  seekToEnd: boolean;
  targetTimestamp: string | null;
  partitionsUpdated: number;
  queue: string;
  partitions: Moved[];
}

export interface SeekRequest {
  group: string;
  queue: string;
  target: SeekTarget;
}

export interface PartitionSeekRequest {
  group: string;
  queue: string;
  partition: string;
}

export async function seekConsumerGroup(
  db: Queryable,
  { tenant }: TenantContext,
  { group, queue, target }: SeekRequest,
): Promise<SeekResult> {
  const partition = target.kind === 'timestamp' ? null : (target.partition ?? null);
  const [row] = await db.query<{ j: Moved[] | null; target: string | null }>(
    `SELECT queen.seek_consumer_group(p_tenant => $1, p_queue => $2, p_group => $3, p_to_end => $4, p_ts => $5::timestamptz,
                                      p_partition => $6, p_offset => $7) AS j,
            queen.admin_iso(t => $5::timestamptz) AS target`,
    [
      tenant,
      queue,
      group,
      target.kind === 'end',
      target.kind === 'timestamp' ? target.timestamp : null,
      partition,
      target.kind === 'offset' ? target.offset : null,
    ],
  );
  const partitions = row?.j;
  if (!partitions) throw queueNotFound(queue);
  if (partition !== null && partitions.length === 0) {
    throw notFound(
      'partition_not_found',
      `Queue "${queue}" has no partition "${partition}"; seek one of its partitions (GET /api/v1/resources/queues/${queue}).`,
    );
  }
  return {
    success: true,
    consumerGroup: group,
    queueName: queue,
    seekToEnd: target.kind === 'end',
    targetTimestamp: row!.target,
    partitionsUpdated: partitions.length,
    queue,
    partitions,
  };
}

/** One partition's cursor to its newest message; cursorMovedTo is that message's creation time. */
export async function seekPartitionToEnd(db: Queryable, ctx: TenantContext, { group, queue, partition }: PartitionSeekRequest) {
  const result = await seekConsumerGroup(db, ctx, { group, queue, target: { kind: 'end', partition } });
  const moved = result.partitions[0]!;
  const [row] = await db.query<{ t: string | null }>(
    'SELECT queen.admin_iso(t => queen.segment_time_at(p_partition => $1, p_offset => $2)) AS t',
    [moved.partitionId, moved.committed],
  );
  return { ...result, partitionName: partition, updated: true as const, cursorMovedTo: row!.t };
}
