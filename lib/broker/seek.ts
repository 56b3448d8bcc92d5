// Seek (SPEC §3.7): move one group's cursors on a queue to the end, to a timestamp, or to an offset
// of one partition. Backwards is allowed and replays; leases and retry counters are cleared.
import type { Queryable } from '../db/types.js';
import { notFound } from '../errors.js';
import { queueNotFound } from './queues.js';

export type SeekTarget =
  | { kind: 'end' }
  | { kind: 'timestamp'; timestamp: string }
  | { kind: 'offset'; offset: number; partition: string };

export interface SeekResult {
  success: true;
  consumerGroup: string;
  queue: string;
  partitions: { partitionId: string; partition: string; committed: number; nextOffset: number }[];
}

export async function seekConsumerGroup(db: Queryable, tenant: string, group: string, queue: string, target: SeekTarget): Promise<SeekResult> {
  const [row] = await db.query<{ j: SeekResult['partitions'] | null }>(
    'SELECT queen.seek_consumer_group($1, $2, $3, $4, $5::timestamptz, $6, $7) AS j',
    [
      tenant,
      queue,
      group,
      target.kind === 'end',
      target.kind === 'timestamp' ? target.timestamp : null,
      target.kind === 'offset' ? target.partition : null,
      target.kind === 'offset' ? target.offset : null,
    ],
  );
  const partitions = row?.j;
  if (!partitions) throw queueNotFound(queue);
  if (target.kind === 'offset' && partitions.length === 0) {
    throw notFound('partition_not_found', `Queue "${queue}" has no partition "${target.partition}"; seek one of its partitions (GET /api/v1/resources/queues/${queue}).`);
  }
  return { success: true, consumerGroup: group, queue, partitions };
}
