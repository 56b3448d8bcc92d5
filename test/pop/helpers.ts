// Shared by the pop and ack suites: drive the broker over HTTP and peek at cursor rows.
import type { Database } from '../../lib/db/types.js';
import { testApp, type TestAppOptions } from '../support/app.js';

export type Call = ReturnType<typeof testApp>['call'];

export interface Msg {
  id: string;
  transactionId: string;
  traceId: string | null;
  data: unknown;
  producerSub: string | null;
  createdAt: string;
  partitionId: string;
  partition: string;
  queue: string;
  leaseId: string;
  consumerGroup: string;
  offset: number;
  attempt: number;
}

export interface PopBody {
  success: boolean;
  queue: string;
  partition: string;
  partitionId: string;
  leaseId: string;
  consumerGroup: string;
  partitionsClaimed: number;
  messages: Msg[];
}

export function broker(db: Database, options: TestAppOptions = {}) {
  const { call } = testApp(db, options);
  return {
    call,
    /** Pushes one segment of `payloads` (or `txns.length` items) to queue/partition. */
    async push(queue: string, partition: string, count: number, txn = (i: number) => `${partition}-${i}`, start = 0) {
      const items = Array.from({ length: count }, (_, i) => ({
        queue,
        partition,
        payload: { n: start + i },
        transactionId: txn(start + i),
      }));
      const res = await call('POST', '/api/v1/push', { items });
      if (res.status !== 201) throw new Error(`push failed: ${res.status} ${res.text}`);
      return res.body as { offset: number; partition_id: string; status: string }[];
    },
    async pop(path: string): Promise<{ status: number; body: PopBody }> {
      const res = await call('GET', `/api/v1/pop/${path}`);
      return { status: res.status, body: res.body as PopBody };
    },
    async ack(items: object[], consumerGroup?: string) {
      const res = await call('POST', '/api/v1/ack/batch', { consumerGroup, acknowledgments: items });
      return res as { status: number; body: any[] };
    },
    /** Acks every message of a pop with one status. */
    ackAll(body: PopBody, status = 'completed', group?: string) {
      return this.ack(
        body.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: body.leaseId, status })),
        group,
      );
    },
  };
}

export async function cursor(db: Database, queue: string, partition: string, group = '__QUEUE_MODE__') {
  const [row] = await db.query<Record<string, any>>(
    `SELECT lc.* FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
       JOIN queen.queues q ON q.id = p.queue_id
      WHERE q.name = $1 AND p.name = $2 AND lc.consumer_group = $3`,
    [queue, partition, group],
  );
  if (!row) throw new Error(`no cursor for ${queue}/${partition}/${group}`);
  return row;
}

export async function configureQueue(db: Database, queue: string, set: string) {
  await db.query(`UPDATE queen.queues SET ${set} WHERE name = $1`, [queue]);
}

/** Makes every live lease of the group on the queue expire now (instead of sleeping). */
export async function expireLeases(db: Database, queue: string, group = '__QUEUE_MODE__') {
  await db.query(
    `UPDATE queen.log_consumers lc SET lease_expires_at = now() - interval '1 second'
       FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
      WHERE p.id = lc.partition_id AND q.name = $1 AND lc.consumer_group = $2 AND lc.batch_end IS NOT NULL`,
    [queue, group],
  );
}

export const offsets = (body: PopBody | null) => (body?.messages ?? []).map((m) => m.offset);
