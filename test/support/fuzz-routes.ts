// What the fuzz needs to reach deep validation: real things to point at (a queue with messages, a
// live lease, a dead-lettered message), made through the routes themselves, and one or more valid
// requests per known route. Routes without an entry here are still fuzzed, from guessed
// parameters and every other route's bodies; `unknownRoutes` names them.
import type { Answer } from './load.js';
import type { Example, Route } from './fuzz.js';

export type Send = (method: string, url: string, body?: string) => Promise<Answer>;

export interface Fixture {
  queue: string;
  namespace: string;
  task: string;
  partition: string;
  group: string;
  partitionId: string;
  transactionId: string;
  leaseId: string;
  offset: number;
  dlqQueue: string;
  dlqPartitionId: string;
  dlqTransactionId: string;
}

async function expectOk(send: Send, method: string, url: string, body?: unknown): Promise<any> {
  const res = await send(method, url, body === undefined ? undefined : JSON.stringify(body));
  if (res.status < 200 || res.status > 299 || res.status === 204) throw new Error(`fuzz fixture: ${method} ${url} answered ${res.status} ${res.text}`);
  return JSON.parse(res.text);
}

/** Queues, messages, a live lease for `group` and a DLQ entry, named after `tag`. */
export async function makeFixture(send: Send, tag: string): Promise<Fixture> {
  const queue = `fz-${tag}`;
  const dlqQueue = `fz-${tag}-dlq`;
  const namespace = `fzns-${tag}`;
  const task = `fztask-${tag}`;
  const group = `fzg-${tag}`;
  const partition = 'p0';
  await expectOk(send, 'POST', '/api/v1/configure', { queue, namespace, task, options: { leaseTime: 3600 } });
  await expectOk(send, 'POST', '/api/v1/configure', { queue: dlqQueue, options: { retryLimit: 0 } });
  const items = Array.from({ length: 20 }, (_, i) => ({ queue, partition: `p${i % 2}`, transactionId: `${tag}-m${i}`, payload: { i } }));
  await expectOk(send, 'POST', '/api/v1/push', { items: [...items, { queue: dlqQueue, partition, transactionId: `${tag}-dead`, payload: { dead: true } }] });
  const popped = await expectOk(send, 'GET', `/api/v1/pop/queue/${queue}/partition/${partition}?batch=2&consumerGroup=${group}`);
  const m = popped.messages[0];
  const dead = await expectOk(send, 'GET', `/api/v1/pop/queue/${dlqQueue}?batch=1`);
  const d = dead.messages[0];
  await expectOk(send, 'POST', '/api/v1/ack', { transactionId: d.transactionId, partitionId: d.partitionId, leaseId: d.leaseId, status: 'dlq' });
  return {
    queue, namespace, task, partition, group, dlqQueue,
    partitionId: m.partitionId, transactionId: m.transactionId, leaseId: popped.leaseId, offset: m.offset,
    dlqPartitionId: d.partitionId, dlqTransactionId: d.transactionId,
  };
}

/** Valid requests per `METHOD path`; destructive routes point at things the fuzz may lose. */
export function examples(f: Fixture): Record<string, Example[]> {
  const ack = { transactionId: f.transactionId, partitionId: f.partitionId, leaseId: f.leaseId, status: 'completed', consumerGroup: f.group, error: null, offset: f.offset };
  const item = { queue: f.queue, partition: f.partition, payload: { n: 1 }, transactionId: `${f.transactionId}-again`, traceId: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' };
  const message = { partitionId: f.partitionId, transactionId: f.transactionId };
  const dead = { partitionId: f.dlqPartitionId, transactionId: f.dlqTransactionId };
  const victim = { queue: `${f.queue}-victim`, group: `${f.group}-victim` };
  const pop = { batch: '2', wait: 'false', timeout: '10', consumerGroup: f.group, subscriptionMode: 'all', autoAck: 'false', partitions: '1' };
  return {
    'GET /health': [{}],
    'POST /api/v1/push': [{ body: { items: [item, { ...item, partition: 'p1', transactionId: null, traceId: null }] } }],
    'GET /api/v1/pop/queue/:queue': [{ params: { queue: f.queue }, query: pop }],
    'GET /api/v1/pop/queue/:queue/partition/:partition': [{ params: { queue: f.queue, partition: f.partition }, query: { ...pop, subscriptionFrom: '2026-01-31T12:00:00Z' } }],
    'GET /api/v1/pop': [{ query: { namespace: f.namespace, task: f.task, ...pop } }],
    'POST /api/v1/ack': [{ body: ack }],
    'POST /api/v1/ack/batch': [{ body: { consumerGroup: f.group, acknowledgments: [ack, { ...ack, status: 'retry', offset: f.offset + 1 }] } }],
    'POST /api/v1/lease/:leaseId/extend': [{ params: { leaseId: f.leaseId }, body: { seconds: 60 } }],
    'POST /api/v1/transaction': [{ body: { operations: [{ type: 'push', items: [item] }, { type: 'ack', ...ack }], requiredLeases: [f.leaseId] } }],
    'POST /api/v1/configure': [
      {
        body: {
          queue: f.queue, namespace: f.namespace, task: f.task,
          options: { leaseTime: 3600, retryLimit: 3, retryDelay: 0, deadLetterQueue: true, delayedProcessing: 0, dedupWindowSeconds: 3600, priority: 0 },
        },
      },
    ],
    'GET /api/v1/resources/queues': [{ query: { namespace: f.namespace, task: f.task } }],
    'GET /api/v1/resources/queues/:queue': [{ params: { queue: f.queue } }],
    'DELETE /api/v1/resources/queues/:queue': [{ params: { queue: victim.queue } }],
    'GET /api/v1/resources/namespaces': [{}],
    'GET /api/v1/resources/tasks': [{}],
    'GET /api/v1/consumer-groups': [{ query: { queue: f.queue } }],
    'POST /api/v1/consumer-groups/:group/queues/:queue/seek': [
      { params: { group: victim.group, queue: f.queue }, body: { offset: 0, partition: f.partition } },
      { params: { group: victim.group, queue: f.queue }, body: { timestamp: '2026-01-31T12:00:00Z' } },
      { params: { group: victim.group, queue: f.queue }, body: { toEnd: true } },
    ],
    'DELETE /api/v1/consumer-groups/:group': [{ params: { group: victim.group } }],
    'DELETE /api/v1/consumer-groups/:group/queues/:queue': [{ params: { group: victim.group, queue: f.queue } }],
    'GET /api/v1/dlq': [{ query: { queue: f.dlqQueue, consumerGroup: '__QUEUE_MODE__', partition: f.partition, from: '2020-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', limit: '10', offset: '0' } }],
    'GET /api/v1/messages/:partitionId/:transactionId': [{ params: message }],
    'POST /api/v1/messages/:partitionId/:transactionId/retry': [{ params: dead, body: { consumerGroup: '__QUEUE_MODE__' } }],
    'DELETE /api/v1/messages/:partitionId/:transactionId': [{ params: dead, query: { consumerGroup: '__QUEUE_MODE__' } }],
  };
}

export const unknownRoutes = (routes: Route[], f: Fixture) => routes.map((r) => `${r.method} ${r.path}`).filter((k) => !(k in examples(f)));
