// What the fuzz needs to reach deep validation: real things to point at (a queue with messages, a
// live lease, a dead-lettered message), made through the routes themselves, and one or more valid
// requests per route. A route without an entry is still fuzzed, from guessed parameters and every
// other route's bodies, but test/http/fuzz.test.ts fails until it has one (`unknownRoutes`).
import type { Example, Route } from './fuzz.js';
import type { Send } from './http.js';

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
  /** Two dead letters of dlqQueue: one for the retry route, one for the delete route. */
  dlqPartitionId: string;
  dlqTransactionId: string;
  dlqDeleteTransactionId: string;
  /** A queue only the queue delete route points at. */
  victimQueue: string;
  traceName: string;
  /** A subscription on queue, and one only the delete route points at. */
  subscriptionId: string;
  victimSubscriptionId: string;
}

/** A public address literal: subscriptions accept it without a lookup, and the fuzz delivers nothing. */
export const FUZZ_ENDPOINT = 'https://93.184.216.34/fuzz';

async function expectOk(send: Send, method: string, url: string, body?: unknown): Promise<any> {
  const res = await send(method, url, body === undefined ? undefined : JSON.stringify(body));
  if (res.status < 200 || res.status > 299 || res.status === 204)
    throw new Error(`fuzz fixture: ${method} ${url} answered ${res.status} ${res.text}`);
  return JSON.parse(res.text);
}

/** Queues, messages, a live lease for `group`, two DLQ entries and a trace, named after `tag`. */
export async function makeFixture(send: Send, tag: string): Promise<Fixture> {
  const queue = `fz-${tag}`;
  const dlqQueue = `fz-${tag}-dlq`;
  const victimQueue = `fz-${tag}-victim`;
  const namespace = `fzns-${tag}`;
  const task = `fztask-${tag}`;
  const group = `fzg-${tag}`;
  const traceName = `fztrace-${tag}`;
  const partition = 'p0';
  await expectOk(send, 'POST', '/api/v1/configure', { queue, namespace, task, options: { leaseTime: 3600 } });
  await expectOk(send, 'POST', '/api/v1/configure', { queue: dlqQueue, options: { retryLimit: 0 } });
  await expectOk(send, 'POST', '/api/v1/configure', { queue: victimQueue });
  const items = Array.from({ length: 20 }, (_, i) => ({ queue, partition: `p${i % 2}`, transactionId: `${tag}-m${i}`, payload: { i } }));
  const dead = ['dead', 'dead-too'].map((t) => ({ queue: dlqQueue, partition, transactionId: `${tag}-${t}`, payload: { dead: true } }));
  await expectOk(send, 'POST', '/api/v1/push', { items: [...items, ...dead] });
  const popped = await expectOk(send, 'GET', `/api/v1/pop/queue/${queue}/partition/${partition}?batch=2&consumerGroup=${group}`);
  const m = popped.messages[0];
  // One at a time: a dlq ack ends the lease, so a second one in the same call would not commit.
  const deadLetters = [];
  for (let i = 0; i < 2; i++) {
    const dead = await expectOk(send, 'GET', `/api/v1/pop/queue/${dlqQueue}?batch=1`);
    const d = dead.messages[0];
    await expectOk(send, 'POST', '/api/v1/ack', {
      transactionId: d.transactionId,
      partitionId: d.partitionId,
      leaseId: d.leaseId,
      status: 'dlq',
    });
    deadLetters.push(d);
  }
  const [d, d2] = deadLetters;
  await expectOk(send, 'POST', '/api/v1/traces', {
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    consumerGroup: group,
    eventType: 'info',
    data: { step: 1 },
    traceNames: [traceName],
  });
  const subscription = await expectOk(send, 'POST', '/api/v1/subscriptions', { queue, name: `fzsub-${tag}`, url: FUZZ_ENDPOINT });
  const victimSubscription = await expectOk(send, 'POST', '/api/v1/subscriptions', {
    queue,
    name: `fzsub-${tag}-victim`,
    url: FUZZ_ENDPOINT,
  });
  return {
    queue,
    namespace,
    task,
    partition,
    group,
    dlqQueue,
    victimQueue,
    traceName,
    subscriptionId: subscription.id,
    victimSubscriptionId: victimSubscription.id,
    partitionId: m.partitionId,
    transactionId: m.transactionId,
    leaseId: popped.leaseId,
    offset: m.offset,
    dlqPartitionId: d.partitionId,
    dlqTransactionId: d.transactionId,
    dlqDeleteTransactionId: d2.transactionId,
  };
}

/** Valid requests per `METHOD path`; destructive routes point at things the fuzz may lose. */
export function examples(f: Fixture): Record<string, Example[]> {
  const ack = {
    transactionId: f.transactionId,
    partitionId: f.partitionId,
    leaseId: f.leaseId,
    status: 'completed',
    consumerGroup: f.group,
    error: null,
    offset: f.offset,
  };
  const item = {
    queue: f.queue,
    partition: f.partition,
    payload: { n: 1 },
    transactionId: `${f.transactionId}-again`,
    traceId: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  };
  const message = { partitionId: f.partitionId, transactionId: f.transactionId };
  const victim = { queue: f.victimQueue, group: `${f.group}-victim` };
  // Each pop route reads as its own group, so one pop's lease does not leave the next one empty.
  const pop = (as: string) => ({
    batch: '2',
    wait: 'false',
    timeout: '10',
    consumerGroup: `${f.group}-${as}`,
    subscriptionMode: 'all',
    autoAck: 'false',
    partitions: '1',
  });
  const window = { from: '2020-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' };
  // What Queen's dashboard sends: every status and analytics route parses the whole set.
  const dashboard = { ...window, queue: f.queue, namespace: f.namespace, task: f.task, interval: 'minute', limit: '10', offset: '0' };
  const page = { limit: '10', offset: '0' };
  // A point per minute is a short window's series (the route caps the points).
  const recent = { from: new Date(Date.now() - 3600_000).toISOString(), to: new Date(Date.now() + 3600_000).toISOString() };
  const trace = {
    transactionId: f.transactionId,
    partitionId: f.partitionId,
    consumerGroup: f.group,
    eventType: 'processing',
    data: { step: 2 },
    traceNames: [f.traceName, `${f.traceName}-b`],
  };
  return {
    'GET /health': [{}],
    'POST /api/v1/push': [{ body: { items: [item, { ...item, partition: 'p1', transactionId: null, traceId: null }] } }],
    'GET /api/v1/pop/queue/:queue': [{ params: { queue: f.queue }, query: pop('q') }],
    'GET /api/v1/pop/queue/:queue/partition/:partition': [
      { params: { queue: f.queue, partition: f.partition }, query: { ...pop('p'), subscriptionFrom: '2026-01-31T12:00:00Z' } },
    ],
    'GET /api/v1/pop': [{ query: { namespace: f.namespace, task: f.task, ...pop('ns') } }],
    'POST /api/v1/ack': [{ body: ack }],
    'POST /api/v1/ack/batch': [
      { body: { consumerGroup: f.group, acknowledgments: [ack, { ...ack, status: 'retry', offset: f.offset + 1 }] } },
    ],
    'POST /api/v1/lease/:leaseId/extend': [{ params: { leaseId: f.leaseId }, body: { seconds: 60 } }],
    'POST /api/v1/transaction': [
      {
        body: {
          operations: [
            { type: 'push', items: [item] },
            { type: 'ack', ...ack },
          ],
          requiredLeases: [f.leaseId],
        },
      },
    ],
    'POST /api/v1/configure': [
      {
        body: {
          queue: f.queue,
          namespace: f.namespace,
          task: f.task,
          options: {
            leaseTime: 3600,
            retryLimit: 3,
            retryDelay: 0,
            deadLetterQueue: true,
            delayedProcessing: 0,
            dedupWindowSeconds: 3600,
            priority: 0,
          },
        },
      },
    ],
    'GET /api/v1/resources/queues': [{ query: { namespace: f.namespace, task: f.task } }],
    'GET /api/v1/resources/queues/:queue': [{ params: { queue: f.queue } }],
    'DELETE /api/v1/resources/queues/:queue': [{ params: { queue: victim.queue } }],
    'GET /api/v1/resources/namespaces': [{}],
    'GET /api/v1/resources/tasks': [{}],
    'GET /api/v1/resources/overview': [{}],
    'GET /api/v1/consumer-groups': [{ query: { queue: f.queue } }],
    'GET /api/v1/consumer-groups/lagging': [{ query: { minLagSeconds: '0' } }],
    'GET /api/v1/consumer-groups/:group': [{ params: { group: f.group } }],
    'POST /api/v1/consumer-groups/:group/subscription': [
      { params: { group: victim.group }, body: { subscriptionTimestamp: '2026-01-31T12:00:00Z' } },
    ],
    'POST /api/v1/consumer-groups/:group/queues/:queue/seek': [
      { params: { group: victim.group, queue: f.queue }, body: { offset: 0, partition: f.partition } },
      { params: { group: victim.group, queue: f.queue }, body: { timestamp: '2026-01-31T12:00:00Z' } },
      { params: { group: victim.group, queue: f.queue }, body: { toEnd: true } },
    ],
    // Any body is ignored, so none is the example: a non-object body is no refusal here.
    'POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek': [
      { params: { group: victim.group, queue: f.queue, partition: f.partition } },
    ],
    'DELETE /api/v1/consumer-groups/:group': [
      { params: { group: victim.group } },
      { params: { group: victim.group }, query: { deleteMetadata: 'false' } },
    ],
    'DELETE /api/v1/consumer-groups/:group/queues/:queue': [
      { params: { group: victim.group, queue: f.queue }, query: { deleteMetadata: 'true' } },
    ],
    'POST /api/v1/stats/refresh': [{}],
    'GET /api/v1/status': [{ query: dashboard }],
    'GET /api/v1/status/queues': [{ query: dashboard }],
    'GET /api/v1/status/queues/:queue': [{ params: { queue: f.queue }, query: window }],
    'GET /api/v1/status/analytics': [
      { query: { ...dashboard, ...recent } },
      { query: { ...dashboard, from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z', interval: 'day' } },
    ],
    'GET /api/v1/status/buffers': [{}],
    'GET /api/v1/analytics/queue-ops': [{ query: dashboard }],
    'GET /api/v1/analytics/queue-lag': [{ query: dashboard }],
    'GET /api/v1/analytics/retention': [{ query: dashboard }],
    'GET /api/v1/analytics/worker-metrics': [{ query: dashboard }],
    'GET /api/v1/analytics/system-metrics': [{ query: dashboard }],
    'GET /api/v1/analytics/queue-parked-replicas': [{ query: dashboard }],
    'GET /api/v1/analytics/postgres-stats': [{}],
    'GET /api/v1/system/maintenance': [{}],
    // Off, so the fuzz's valid examples leave pops delivering; the test turns both off after each route.
    'POST /api/v1/system/maintenance': [{ body: { enabled: false } }],
    'GET /api/v1/system/maintenance/pop': [{}],
    'POST /api/v1/system/maintenance/pop': [{ body: { enabled: false } }],
    'GET /api/v1/system/shared-state': [{}],
    'GET /api/v1/migration/status': [{}],
    'POST /api/v1/migration/:action': [{ params: { action: 'start' }, body: {} }],
    'POST /streams/v1/*': [{ body: {} }],
    'GET /api/me': [{}],
    'GET /metrics': [{}],
    'GET /metrics/prometheus': [{}],
    'GET /api/v1/dlq': [
      { query: { queue: f.dlqQueue, consumerGroup: '__QUEUE_MODE__', partition: f.partition, ...window, limit: '10', offset: '0' } },
    ],
    // A window long past: the example must leave the dead letters the retry and delete examples use.
    'POST /api/v1/dlq/redrive': [
      {
        body: {
          queue: f.dlqQueue,
          partition: f.partition,
          consumerGroup: '__QUEUE_MODE__',
          from: '2000-01-01T00:00:00Z',
          to: '2000-01-02T00:00:00Z',
          limit: 10,
        },
      },
    ],
    'POST /api/v1/subscriptions': [
      {
        body: {
          queue: f.queue,
          name: `${f.group}-sub-new`,
          url: FUZZ_ENDPOINT,
          consumerGroup: `${f.group}-sub-new`,
          options: {
            batchSize: 5,
            maxInFlight: 2,
            timeoutMs: 5000,
            rateLimit: 10,
            retryBaseMs: 500,
            retryMaxMs: 60000,
            subscriptionMode: 'new',
            disableAfterMs: 3600000,
            headers: { authorization: 'Bearer x' },
          },
        },
      },
    ],
    'GET /api/v1/subscriptions': [{}, { query: { queue: f.queue } }],
    'GET /api/v1/subscriptions/:id': [{ params: { id: f.subscriptionId } }],
    'PATCH /api/v1/subscriptions/:id': [
      { params: { id: f.subscriptionId }, body: { url: `${FUZZ_ENDPOINT}/v2`, options: { batchSize: 20, headers: {} }, state: 'paused' } },
      { params: { id: f.subscriptionId }, body: { state: 'active' } },
    ],
    'DELETE /api/v1/subscriptions/:id': [{ params: { id: f.victimSubscriptionId } }],
    'POST /api/v1/subscriptions/:id/rotate-secret': [{ params: { id: f.subscriptionId } }],
    'GET /api/v1/subscriptions/:id/attempts': [{ params: { id: f.subscriptionId }, query: { limit: '10', before: '1000' } }],
    'GET /api/v1/messages': [
      { query: { queue: f.queue, partition: f.partition, ns: f.namespace, task: f.task, status: 'pending', ...window, ...page } },
      { query: { namespace: f.namespace, status: 'dead_letter' } },
    ],
    'GET /api/v1/messages/:partitionId/:transactionId': [{ params: message }],
    'POST /api/v1/messages/:partitionId/:transactionId/retry': [
      { params: { partitionId: f.dlqPartitionId, transactionId: f.dlqTransactionId }, body: { consumerGroup: '__QUEUE_MODE__' } },
    ],
    'POST /api/v1/messages/:partitionId/:transactionId/dlq': [{ params: message, body: {} }],
    'DELETE /api/v1/messages/:partitionId/:transactionId': [
      { params: { partitionId: f.dlqPartitionId, transactionId: f.dlqDeleteTransactionId }, query: { consumerGroup: '__QUEUE_MODE__' } },
    ],
    'POST /api/v1/traces': [
      { body: trace },
      {
        body: {
          transactionId: f.transactionId,
          partitionId: Number(f.partitionId),
          data: 'done',
          eventType: null,
          consumerGroup: null,
          traceNames: f.traceName,
        },
      },
    ],
    'GET /api/v1/traces/names': [{ query: page }],
    'GET /api/v1/traces/by-name/:name': [{ params: { name: f.traceName }, query: page }],
    'GET /api/v1/traces/:partitionId/:transactionId': [{ params: message }],
  };
}

/** Routes that answer 501 not_supported by design (docs/api.md): the only ones a 501 may come from. */
export const NOT_SUPPORTED = new Set([
  'POST /api/v1/migration/:action',
  'POST /streams/v1/*',
  'POST /api/v1/messages/:partitionId/:transactionId/dlq',
]);

export const unknownRoutes = (routes: Route[], f: Fixture) => routes.map((r) => `${r.method} ${r.path}`).filter((k) => !(k in examples(f)));

/** Examples whose route the app no longer has. */
export const staleExamples = (routes: Route[], f: Fixture) => {
  const known = new Set(routes.map((r) => `${r.method} ${r.path}`));
  return Object.keys(examples(f)).filter((k) => !known.has(k));
};
