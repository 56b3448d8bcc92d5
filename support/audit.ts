// Checks what the log holds against what a Load's clients were told: every push answered 201 is
// stored once at the offset it was given, offsets are contiguous, nothing acknowledged comes back,
// nothing is delivered while another delivery's lease is live, and everything stored was delivered.
import { decodeSegmentRow } from '../lib/broker/segments.js';
import { ensureZstd } from '../lib/codec/zstd.js';
import type { Queryable } from '../lib/db/types.js';
import type { Load } from './load.js';

export interface AuditReport {
  /** Messages stored in the load's queues. */
  stored: number;
  /** Push items answered 201 (queued or duplicate). */
  acknowledgedPushes: number;
  /** Answered 201 but absent, or stored at another partition/offset than the answer said. */
  lost: string[];
  storedTwice: string[];
  /** Partitions whose segments leave a gap or overlap, or disagree with last_offset. */
  gaps: string[];
  /** Delivered again after an ack of it answered success. */
  redeliveredAfterAck: string[];
  /** Delivered again before the earlier delivery's lease could have expired. */
  underLiveLease: string[];
  /** Stored but never delivered (after a drain this means the cursor skipped them). */
  undelivered: string[];
}

type StoredRow = {
  partition_id: string;
  last_offset: string;
  log_start: string;
  base_offset: string | null;
  end_offset: string;
  blob: Uint8Array;
};

export async function auditLoad(db: Queryable, load: Load): Promise<AuditReport> {
  await ensureZstd();
  const rows = await db.query<StoredRow>(
    `SELECT p.id AS partition_id, p.last_offset, p.log_start, s.base_offset, s.end_offset, s.blob
       FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
       LEFT JOIN queen.log_segments s ON s.partition_id = p.id
      WHERE q.name = ANY($1) ORDER BY p.id, s.base_offset`,
    [load.options.queues],
  );
  const where = new Map<string, string[]>();
  const gaps: string[] = [];
  const next = new Map<string, number>();
  for (const row of rows) {
    const pid = String(row.partition_id);
    if (row.base_offset === null) continue;
    const base = Number(row.base_offset);
    const expected = next.get(pid) ?? Number(row.log_start);
    if (base !== expected) gaps.push(`partition ${pid}: segment at ${base}, expected ${expected}`);
    next.set(pid, Number(row.end_offset) + 1);
    for (const m of decodeSegmentRow(
      { base_offset: row.base_offset, end_offset: row.end_offset, blob: row.blob },
      base,
      Number(row.end_offset),
      pid,
    )) {
      const list = where.get(m.transactionId) ?? [];
      list.push(`${pid}@${m.offset}`);
      where.set(m.transactionId, list);
    }
  }
  const last = new Map(rows.map((r) => [String(r.partition_id), Number(r.last_offset)]));
  for (const [pid, lastOffset] of last) {
    if ((next.get(pid) ?? 0) - 1 !== lastOffset)
      gaps.push(`partition ${pid}: segments end at ${(next.get(pid) ?? 0) - 1}, last_offset ${lastOffset}`);
  }

  const ours = (txn: string) => txn.startsWith(`${load.options.run}-`);
  const lost: string[] = [];
  for (const p of load.pushed.values()) {
    const at = where.get(p.txn);
    if (!at || !at.includes(`${p.partitionId}@${p.offset}`))
      lost.push(`${p.txn} answered ${p.status} at ${p.partitionId}@${p.offset}, stored at ${at?.join(',') ?? 'nowhere'}`);
  }
  const storedTwice = [...where].filter(([txn, at]) => ours(txn) && at.length > 1).map(([txn, at]) => `${txn} at ${at.join(',')}`);

  const byOffset = new Map<string, Load['deliveries']>();
  for (const d of load.deliveries) {
    const key = `${d.partitionId}@${d.offset}`;
    byOffset.set(key, [...(byOffset.get(key) ?? []), d]);
  }
  const ackedAt = new Map<string, number>();
  for (const a of load.acked) {
    const key = `${a.partitionId}@${a.offset}`;
    ackedAt.set(key, Math.min(ackedAt.get(key) ?? Infinity, a.at));
  }
  const redeliveredAfterAck: string[] = [];
  const underLiveLease: string[] = [];
  const leaseMs = load.options.leaseSeconds * 1000;
  for (const [key, list] of byOffset) {
    list.sort((a, b) => a.sentAt - b.sentAt);
    for (let i = 1; i < list.length; i++) {
      const before = list[i - 1]!;
      const again = list[i]!;
      if ((ackedAt.get(key) ?? Infinity) < again.sentAt) redeliveredAfterAck.push(`${key} (${again.txn})`);
      else if (again.receivedAt < before.sentAt + leaseMs) {
        underLiveLease.push(`${key} (${again.txn}): leased at ${before.sentAt}, again at ${again.receivedAt}`);
      }
    }
  }
  const delivered = new Set(byOffset.keys());
  const undelivered = [...where]
    .filter(([txn]) => ours(txn))
    .flatMap(([, at]) => at)
    .filter((key) => !delivered.has(key));

  return {
    stored: [...where.values()].reduce((n, at) => n + at.length, 0),
    acknowledgedPushes: load.pushed.size,
    lost,
    storedTwice,
    gaps,
    redeliveredAfterAck,
    underLiveLease,
    undelivered,
  };
}

/** True once the group's cursor has reached the end of every partition of the load's queues. */
export async function drained(db: Queryable, queues: string[], group = '__QUEUE_MODE__'): Promise<boolean> {
  const [row] = await db.query<{ behind: string }>(
    `SELECT count(*) AS behind FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id
       LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = $2
      WHERE q.name = ANY($1) AND coalesce(c.committed, -1) < p.last_offset`,
    [queues, group],
  );
  return Number(row!.behind) === 0;
}

/** Per queen.* table: row count and md5 of its rows' text. Equal before and after = nothing written. */
export async function tableFingerprint(db: Queryable): Promise<Record<string, string>> {
  const tables = await db.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'queen' ORDER BY 1");
  const columns = tables.map(
    ({ name }) =>
      `(SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM queen.${name} t) AS "${name}"`,
  );
  const [row] = await db.query<Record<string, string>>(`SELECT ${columns.join(', ')}`);
  return row!;
}
