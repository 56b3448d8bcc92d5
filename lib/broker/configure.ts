// POST /configure (docs/semantics.md#configure): the queue options with their types and ranges, an
// upsert with merge semantics in one statement, the stored configuration echoed and a warning for
// each compatibility option that has no effect.
import * as v from 'valibot';
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';
import { INT4_MAX } from './limits.js';
// The answer's shape is the wire's, declared once in the client's wire module.
import type { ConfigureResponse as ConfigureResult } from '../../client/src/wire.js';

export type { ConfigureResult };

const count = (name: string, min = 0) =>
  v.pipe(
    v.number(`${name} must be a number`),
    v.integer(`${name} must be a whole number`),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(INT4_MAX, `${name} must be at most ${INT4_MAX}`),
  );
const flag = (name: string) => v.boolean(`${name} must be true or false`);

export const OPTION_SCHEMAS = {
  leaseTime: count('leaseTime (seconds)', 1),
  retryLimit: count('retryLimit'),
  retryDelay: count('retryDelay (milliseconds)'),
  deadLetterQueue: flag('deadLetterQueue'),
  dlqAfterMaxRetries: flag('dlqAfterMaxRetries'),
  delayedProcessing: count('delayedProcessing (seconds)'),
  windowBuffer: count('windowBuffer (seconds)'),
  retentionEnabled: flag('retentionEnabled'),
  retentionSeconds: count('retentionSeconds'),
  completedRetentionSeconds: count('completedRetentionSeconds'),
  dedupWindowSeconds: count('dedupWindowSeconds'),
  encryptionEnabled: flag('encryptionEnabled'),
  priority: v.pipe(
    v.number('priority must be a number'),
    v.integer('priority must be a whole number'),
    v.minValue(-INT4_MAX, `priority must be at least ${-INT4_MAX}`),
    v.maxValue(INT4_MAX, `priority must be at most ${INT4_MAX}`),
  ),
  maxSize: count('maxSize'),
  ttl: count('ttl'),
  maxWaitTimeSeconds: count('maxWaitTimeSeconds'),
} as const;

export type OptionName = keyof typeof OPTION_SCHEMAS;
export const OPTION_NAMES = Object.keys(OPTION_SCHEMAS) as OptionName[];
export type QueueOptions = { [K in OptionName]: v.InferOutput<(typeof OPTION_SCHEMAS)[K]> };

export interface ConfigureRequest {
  queue: string;
  namespace: string | null;
  task: string | null;
  options: Partial<QueueOptions>;
}

export async function configureQueue(db: Queryable, { tenant }: TenantContext, req: ConfigureRequest): Promise<ConfigureResult> {
  const [row] = await db.query<{ j: StoredQueue }>(
    'SELECT queen.configure_queue(p_tenant => $1, p_name => $2, p_namespace => $3, p_task => $4, p_options => $5::jsonb) AS j',
    [tenant, req.queue, req.namespace, req.task, JSON.stringify(req.options)],
  );
  const stored = row!.j;
  const options = orderOptions(stored.options);
  return {
    configured: true,
    queueId: stored.id,
    queue: stored.name,
    namespace: stored.namespace,
    task: stored.task,
    storage: 'segments',
    options,
    warnings: warningsFor(options),
  };
}

interface StoredQueue {
  created: boolean;
  id: string;
  name: string;
  namespace: string | null;
  task: string | null;
  options: QueueOptions;
}

/** The options in the order OPTION_SCHEMAS declares them (jsonb sorts keys). */
export function orderOptions(options: QueueOptions): QueueOptions {
  return Object.fromEntries(OPTION_NAMES.map((k) => [k, options[k]])) as QueueOptions;
}

/** Each stored value that needs behaviour the log model does not have; never a silent no-op. */
export function warningsFor(o: QueueOptions): string[] {
  const warnings: string[] = [];
  if (o.priority !== 0)
    warnings.push('priority has no effect: a partition drains strictly in commit order; use separate queues for separate priorities.');
  if (o.maxSize !== 0)
    warnings.push('maxSize has no effect: queues are not capped; bound storage with retentionSeconds or completedRetentionSeconds.');
  if (o.ttl !== 0) warnings.push('ttl has no effect: messages do not expire one by one; use retentionEnabled with retentionSeconds.');
  if (!o.retentionEnabled && o.retentionSeconds > 0) warnings.push('retentionSeconds has no effect while retentionEnabled is false.');
  return warnings;
}
