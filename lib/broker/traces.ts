// Message traces (docs/semantics.md#queens-other-routes): what a consumer's msg.trace() records
// about one message, stored per tenant beside the log and never touched by push, pop or ack. A
// trace hangs off its partition, so one whose sidecar hash was already purged is still kept (its
// offset is then unknown).
import { v7 as uuidv7 } from 'uuid';
import { xxh3_128 } from '../codec/xxh3.js';
import { selectJson } from '../db/json.js';
import type { Queryable } from '../db/types.js';
import { notFound } from '../errors.js';
import type { TenantContext } from './context.js';
import { TRACE_PURGE_BATCH, TRACE_RETENTION_SECONDS } from './limits.js';
import type { MessageAddress } from './messages.js';

export interface TraceRequest {
  partitionId: string;
  transactionId: string;
  consumerGroup: string;
  eventType: string;
  /** The `data` value as JSON text. */
  data: string;
  /** Distinct, non-empty. */
  traceNames: string[];
}

export interface Page {
  limit: number;
  offset: number;
}

export async function recordTrace(db: Queryable, { tenant }: TenantContext, t: TraceRequest) {
  const [row] = await db.query<{ trace_id: string; msg_offset: string | null }>(
    `SELECT trace_id, msg_offset
       FROM queen.record_trace(p_tenant => $1, p_id => $2, p_partition => $3, p_txn => $4, p_hash => $5, p_group => $6,
                               p_event => $7, p_data => $8::jsonb, p_names => $9::text[])`,
    [tenant, uuidv7(), t.partitionId, t.transactionId, xxh3_128(t.transactionId), t.consumerGroup, t.eventType, t.data, t.traceNames],
  );
  if (!row) {
    throw notFound('partition_not_found', `No partition ${t.partitionId}; trace a message with the partitionId its pop returned.`);
  }
  return { success: true as const, traceId: row.trace_id, offset: row.msg_offset === null ? null : Number(row.msg_offset) };
}

export const tracesOfMessage = (db: Queryable, { tenant }: TenantContext, { partitionId, transactionId }: MessageAddress) =>
  selectJson<unknown>(db, 'queen.message_traces_of(p_tenant => $1, p_partition => $2, p_txn => $3)', [tenant, partitionId, transactionId]);

export interface TracesByNameRequest {
  name: string;
  page: Page;
}

export const tracesByName = (db: Queryable, { tenant }: TenantContext, { name, page }: TracesByNameRequest) =>
  selectJson<unknown>(db, 'queen.traces_by_name(p_tenant => $1, p_name => $2, p_limit => $3, p_offset => $4)', [
    tenant,
    name,
    page.limit,
    page.offset,
  ]);

export const traceNames = (db: Queryable, { tenant }: TenantContext, page: Page) =>
  selectJson<unknown>(db, 'queen.trace_names(p_tenant => $1, p_limit => $2, p_offset => $3)', [tenant, page.limit, page.offset]);

/** Retention: deletes traces older than `maxAgeSeconds`, a batch per statement; returns how many. */
export async function purgeTraces(db: Queryable, maxAgeSeconds = TRACE_RETENTION_SECONDS): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.query<{ n: string }>('SELECT queen.purge_traces(p_max_age_seconds => $1, p_limit => $2) AS n', [
      maxAgeSeconds,
      TRACE_PURGE_BATCH,
    ]);
    const n = Number(row!.n);
    total += n;
    if (n < TRACE_PURGE_BATCH) return total;
  }
}
