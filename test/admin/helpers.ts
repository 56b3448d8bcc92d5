// Drives the broker through its HTTP routes for the admin and retention suites.
import type { Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/types.js';
import type { Principal } from '../../lib/http/context.js';
import { testApp } from '../support/app.js';

export function adminApi(db: Database, options: { config?: Partial<Config>; tenant?: string } = {}) {
  const principal: Principal = { tenant: options.tenant ?? 'default', sub: null, role: 'admin' };
  const api = testApp(db, { config: options.config, authenticate: async () => principal });
  const call = api.call.bind(api);
  return {
    ...api,
    configure: (queue: string, opts: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
      call('POST', '/api/v1/configure', { queue, options: opts, ...extra }),
    /** One push request: one segment per (queue, partition). */
    async push(queue: string, partition: string, payloads: unknown[], txnIds?: string[]) {
      const items = payloads.map((payload, i) => ({ queue, partition, payload, ...(txnIds ? { transactionId: txnIds[i] } : {}) }));
      const res = await call('POST', '/api/v1/push', { items });
      if (res.status !== 201) throw new Error(`push failed: ${res.status} ${res.text}`);
      return res.body as { transaction_id: string; partition_id: string; offset: number; message_id: string; status: string }[];
    },
    pop: (queue: string, query: Record<string, string | number | boolean> = {}, partition?: string) => {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
      const path = `/api/v1/pop/queue/${encodeURIComponent(queue)}${partition ? `/partition/${encodeURIComponent(partition)}` : ''}`;
      return call('GET', qs ? `${path}?${qs}` : path);
    },
    ack: (body: Record<string, unknown>) => call('POST', '/api/v1/ack', body),
    describe: (queue: string) => call('GET', `/api/v1/resources/queues/${encodeURIComponent(queue)}`),
    seek: (group: string, queue: string, body: unknown) =>
      call('POST', `/api/v1/consumer-groups/${encodeURIComponent(group)}/queues/${encodeURIComponent(queue)}/seek`, body),
  };
}

export type AdminApi = ReturnType<typeof adminApi>;

/** Makes every segment and sidecar row of a queue `seconds` older, offset by offset (older first). */
export async function backdate(db: Database, queue: string, seconds: number, where = 'TRUE') {
  for (const table of ['log_segments', 'log_txns']) {
    await db.query(
      `UPDATE queen.${table} s SET created_at = s.created_at - make_interval(secs => $2)
         FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
        WHERE s.partition_id = p.id AND q.name = $1 AND ${where}`,
      [queue, seconds],
    );
  }
}

export async function partitionRow(db: Database, queue: string, partition = 'Default') {
  const [row] = await db.query<{ id: string; last_offset: string; log_start: string; txns_start: string }>(
    `SELECT p.id, p.last_offset, p.log_start, p.txns_start FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
      WHERE q.name = $1 AND p.name = $2`,
    [queue, partition],
  );
  return { id: row!.id, lastOffset: Number(row!.last_offset), logStart: Number(row!.log_start), txnsStart: Number(row!.txns_start) };
}

export async function segmentBases(db: Database, queue: string, partition = 'Default'): Promise<number[]> {
  const rows = await db.query<{ base_offset: string }>(
    `SELECT s.base_offset FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
       JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1 AND p.name = $2 ORDER BY 1`,
    [queue, partition],
  );
  return rows.map((r) => Number(r.base_offset));
}
