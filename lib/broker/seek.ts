// Seek (SPEC §3.7): move one group's cursors on a queue to the end, to a timestamp, or to an offset
// of one partition. Backwards is allowed and replays; leases and retry counters are cleared.
import * as v from 'valibot';
import type { Queryable } from '../db/client.js';
import { badRequest, notFound } from '../errors.js';
import { DEFAULT_PARTITION, nameSchema } from '../http/names.js';
import { queueNotFound } from './queues.js';

export type SeekTarget =
  | { kind: 'end' }
  | { kind: 'timestamp'; timestamp: string }
  | { kind: 'offset'; offset: number; partition: string };

const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;

/** An ISO 8601 date or date-time string PostgreSQL will parse the same way. */
export const timestampSchema = (what: string) =>
  v.pipe(
    v.string(`${what} must be an ISO 8601 string`),
    v.check((s) => ISO.test(s) && !Number.isNaN(Date.parse(s)), `${what} must be an ISO 8601 date-time like 2026-01-31T12:00:00Z`),
  );

const bodySchema = v.object({
  toEnd: v.optional(v.boolean('toEnd must be true or false')),
  timestamp: v.optional(timestampSchema('timestamp')),
  offset: v.optional(
    v.pipe(v.number('offset must be a number'), v.safeInteger('offset must be a whole number'), v.minValue(0, 'offset must be at least 0')),
  ),
  partition: v.optional(nameSchema('partition')),
});

const ONE_OF = 'Send exactly one of {"toEnd":true}, {"timestamp":"<ISO 8601>"} or {"offset":N,"partition":"<name>"}.';

export function parseSeekTarget(body: unknown): SeekTarget {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('invalid_seek', ONE_OF);
  const b = v.safeParse(bodySchema, body);
  if (!b.success) {
    const issue = b.issues[0]!;
    const path = v.getDotPath(issue);
    throw badRequest('invalid_seek', `${path ? `${path}: ` : ''}${issue.message}`);
  }
  const { toEnd, timestamp, offset, partition } = b.output;
  const chosen = [toEnd === true, timestamp !== undefined, offset !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw badRequest('invalid_seek', ONE_OF);
  if (partition !== undefined && offset === undefined) throw badRequest('invalid_seek', `partition only goes with offset. ${ONE_OF}`);
  if (toEnd) return { kind: 'end' };
  if (timestamp !== undefined) return { kind: 'timestamp', timestamp };
  return { kind: 'offset', offset: offset!, partition: partition ?? DEFAULT_PARTITION };
}

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
