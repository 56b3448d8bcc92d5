// Queue resources (docs/api.md#queues, docs/semantics.md#figures): listing, detail with
// per-partition watermarks and per-group lag, namespaces and tasks, the overview, and delete with
// its cascade. Each is one SQL function call; the figures are Queen's (pending excludes what is in
// flight) and computed from the log.
import { selectJson } from '../db/json.js';
import type { Queryable } from '../db/types.js';
import { notFound, SqlState, sqlState } from '../errors.js';
import { orderOptions, type QueueOptions } from './configure.js';
import type { TenantContext } from './context.js';

export interface QueueSummary {
  id: string;
  name: string;
  namespace: string | null;
  task: string | null;
  createdAt: string;
  partitions: number;
  messages: { total: number; pending: number; processing: number; completed: number };
}

/** Queen's per-partition and per-queue figures; `failed` is always null (no count of failed acks is kept). */
export interface Figures {
  total: number;
  pending: number;
  processing: number;
  completed: number;
  failed: null;
  deadLetter: number;
}

export async function listQueues(
  db: Queryable,
  { tenant }: TenantContext,
  filter: { namespace?: string; task?: string } = {},
): Promise<QueueSummary[]> {
  const [row] = await db.query<{ j: QueueSummary[] }>('SELECT queen.list_queues(p_tenant => $1, p_namespace => $2, p_task => $3) AS j', [
    tenant,
    filter.namespace ?? null,
    filter.task ?? null,
  ]);
  return row!.j;
}

export interface QueueDetail {
  id: string;
  name: string;
  namespace: string | null;
  task: string | null;
  createdAt: string;
  updatedAt: string;
  options: QueueOptions;
  partitions: {
    id: string;
    name: string;
    last_offset: number;
    log_start: number;
    txns_start: number;
    messages: number;
    stats: Figures;
    oldestMessage: string | null;
    newestMessage: string | null;
    consumerGroups: { consumerGroup: string; committed: number; lag: number; leased: boolean }[];
  }[];
  totals: Figures;
}

export async function describeQueue(db: Queryable, { tenant }: TenantContext, queue: string): Promise<QueueDetail> {
  const [row] = await db.query<{ j: QueueDetail | null }>('SELECT queen.describe_queue(p_tenant => $1, p_name => $2) AS j', [
    tenant,
    queue,
  ]);
  const detail = row?.j;
  if (!detail) throw queueNotFound(queue);
  return { ...detail, options: orderOptions(detail.options) };
}

// delete_queue locks the queue row before the partitions; a push creating a partition of that queue
// while holding another of its partitions locks them the other way round, and one side is
// chosen as the deadlock victim. Deleting again is safe.
export async function deleteQueue(db: Queryable, { tenant }: TenantContext, queue: string) {
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await db.query<{ existed: boolean }>('SELECT queen.delete_queue(p_tenant => $1, p_name => $2) AS existed', [
        tenant,
        queue,
      ]);
      return { deleted: true as const, queue, existed: row!.existed };
    } catch (err) {
      if (attempt >= 3 || sqlState(err) !== SqlState.DEADLOCK_DETECTED) throw err;
    }
  }
}

/** The queues grouped by namespace or by task (Queen's shape: `queues` is a count); queues without one are left out. */
export async function groupQueues(db: Queryable, ctx: TenantContext, by: 'namespace' | 'task') {
  const groups = new Map<string, QueueSummary[]>();
  for (const q of await listQueues(db, ctx)) {
    const key = q[by];
    if (key === null) continue;
    groups.set(key, [...(groups.get(key) ?? []), q]);
  }
  const sum = (queues: QueueSummary[], f: (q: QueueSummary) => number) => queues.reduce((n, q) => n + f(q), 0);
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, queues]) => ({
      [by]: name,
      queues: queues.length,
      queueNames: queues.map((q) => q.name),
      partitions: sum(queues, (q) => q.partitions),
      messages: {
        total: sum(queues, (q) => q.messages.total),
        pending: sum(queues, (q) => q.messages.pending),
        processing: sum(queues, (q) => q.messages.processing),
      },
    }));
}

/** GET /resources/overview: counts, message figures, lag spread and ingest rate of the tenant. */
export const resourcesOverview = (db: Queryable, { tenant }: TenantContext) =>
  selectJson<unknown>(db, 'queen.resources_overview(p_tenant => $1)', [tenant]);

export const queueNotFound = (queue: string) =>
  notFound('queue_not_found', `Queue "${queue}" does not exist; create it with POST /api/v1/configure or by pushing to it.`);
