// Unknown keys are refused (lib/http/requests/keys.ts), so every request shape Queen's clients
// send must still pass: each shape below is copied from the client file named beside it, in
// queen-mq/queen at ab23212 (its keys and the values it fills them with).
import { describe, expect, it } from 'vitest';
import { testClient, type Msg, type PopBody } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db);

// utils/defaults.js QUEUE_DEFAULTS (JS), utils/defaults.py (Python, camelCased by
// queue_builder.py), src/Support/Defaults.php (PHP), QueueConfig::to_json (C++).
const QUEUE_DEFAULTS = {
  leaseTime: 300,
  retryLimit: 3,
  priority: 0,
  delayedProcessing: 0,
  windowBuffer: 0,
  maxSize: 0,
  retentionSeconds: 0,
  completedRetentionSeconds: 0,
  encryptionEnabled: false,
};
const UUID = '0193a5b2-7c4e-7000-8000-0123456789ab';

interface Shapes {
  configure: (queue: string) => unknown;
  pushItem: (queue: string, n: number) => unknown;
  /** The pop query string, all the parameters the client may add. */
  pop: (group: string) => Record<string, string>;
  ack: (m: Msg, leaseId: string) => unknown;
  ackBatch: (ms: Msg[], leaseId: string) => unknown;
  transaction: (m: Msg, leaseId: string, queue: string) => unknown;
}

// The JS, Python and PHP clients build the same bodies (Queen.js / client.py / Queen.php ack,
// QueueBuilder push, TransactionBuilder).
const jsLike = (configure: Shapes['configure']): Shapes => ({
  configure,
  pushItem: (queue, n) => ({ queue, partition: 'Default', payload: { n }, transactionId: `t-${n}`, traceId: UUID }),
  pop: (group) => ({
    batch: '1',
    wait: 'false',
    timeout: '1000',
    consumerGroup: group,
    autoAck: 'false',
    subscriptionMode: 'all',
    subscriptionFrom: '2020-01-01T00:00:00.000Z',
    partitions: '2',
  }),
  ack: (m, leaseId) => ({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    status: 'completed',
    error: null,
    consumerGroup: null,
    leaseId,
  }),
  ackBatch: (ms, leaseId) => ({
    acknowledgments: ms.map((m) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      status: 'completed',
      error: null,
      leaseId,
    })),
    consumerGroup: null,
  }),
  transaction: (m, leaseId, queue) => ({
    operations: [
      { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' },
      { type: 'push', items: [{ queue, payload: { n: 'tx' }, partition: 'Default' }] },
    ],
    requiredLeases: [leaseId],
  }),
});

const CLIENTS: Record<string, Shapes> = {
  // clients/client-js/client-v2/builders/QueueBuilder.js create(), push(), #buildPopParams;
  // consumer/ConsumerManager.js #buildParams; Queen.js ack(); builders/TransactionBuilder.js.
  javascript: jsLike((queue) => ({ queue, namespace: null, task: null, options: QUEUE_DEFAULTS })),
  // clients/client-py/queen/builders/queue_builder.py create(), push(); client.py ack();
  // builders/transaction_builder.py; consumer/consumer_manager.py _build_params.
  python: jsLike((queue) => ({ queue, namespace: null, task: null, options: QUEUE_DEFAULTS })),
  // clients/client-laravel/src/Builders/QueueBuilder.php create(), push(); src/Queen.php ack(),
  // buildAck(); Builders/TransactionBuilder.php; Consumer/ConsumerManager.php pop params.
  php: jsLike((queue) => ({ queue, namespace: null, task: null, options: QUEUE_DEFAULTS })),
  // clients/client-go/types.go (json tags, omitempty), operation_builder.go executeCreate and
  // buildOptions, push_builder.go executeDirect, queue_builder.go buildPopParams, queen.go Ack,
  // transaction_builder.go Ack/Push/Commit. queenctl (clients/client-cli) calls through it.
  go: {
    configure: (queue) => ({ queue, options: { leaseTime: 300, retryLimit: 3 } }),
    pushItem: (queue, n) => ({ queue, partition: 'Default', payload: { n }, transactionId: `t-${n}`, traceId: UUID }),
    pop: (group) => ({
      batch: '1',
      wait: 'false',
      timeout: '1000',
      consumerGroup: group,
      autoAck: 'false',
      subscriptionMode: 'all',
      subscriptionFrom: 'now',
      partitions: '2',
    }),
    ack: (m, leaseId) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId, status: 'completed' }),
    ackBatch: (ms, leaseId) => ({
      acknowledgments: ms.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId, status: 'completed' })),
    }),
    transaction: (m, leaseId, queue) => ({
      operations: [
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' },
        { type: 'push', items: [{ queue, partition: 'Default', payload: { n: 'tx' }, transactionId: `tx-${m.transactionId}` }] },
      ],
      requiredLeases: [leaseId],
    }),
  },
  // clients/client-cpp/queen_client.hpp: QueueBuilder::create (namespace_ and task_ are "" when
  // unset), push, pop; QueenClient::ack; TransactionBuilder ack, QueuePushBuilder::push, commit.
  cpp: {
    configure: (queue) => ({ queue, namespace: '', task: '', options: QUEUE_DEFAULTS }),
    pushItem: (queue, n) => ({ queue, partition: 'Default', payload: { n }, transactionId: `t-${n}`, traceId: UUID }),
    pop: (group) => ({
      batch: '1',
      wait: 'false',
      timeout: '1000',
      consumerGroup: group,
      subscriptionMode: 'new',
      subscriptionFrom: '2020-01-01T00:00:00Z',
      partitions: '2',
    }),
    ack: (m, leaseId) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      status: 'completed',
      error: null,
      consumerGroup: null,
      leaseId,
    }),
    ackBatch: (ms, leaseId) => ({
      acknowledgments: ms.map((m) => ({
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        status: 'completed',
        error: null,
        leaseId,
      })),
      consumerGroup: null,
    }),
    transaction: (m, leaseId, queue) => ({
      operations: [
        { type: 'ack', transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: '__QUEUE_MODE__' },
        { type: 'push', items: [{ queue, payload: { n: 'tx' } }] },
      ],
      requiredLeases: [leaseId],
    }),
  },
};

async function popOne(queue: string, batch = 1): Promise<PopBody> {
  const res = await api.popQueue(queue, { batch, wait: 'false', timeout: 1000 });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe.each(Object.entries(CLIENTS))("Queen's %s client's request shapes", (name, shapes) => {
  const queue = `shapes-${name}`;

  it('configure, push, pop, ack, batch ack and transaction all succeed', async () => {
    const configured = await api.call('POST', '/api/v1/configure', shapes.configure(queue));
    expect([configured.status, configured.body.configured], configured.text).toEqual([200, true]);

    const pushed = await api.call('POST', '/api/v1/push', { items: [1, 2, 3, 4].map((n) => shapes.pushItem(queue, n)) });
    expect(pushed.status, pushed.text).toBe(201);
    expect(pushed.body.map((r: { status: string }) => r.status)).toEqual(['queued', 'queued', 'queued', 'queued']);

    const one = await popOne(queue);
    const acked = await api.call('POST', '/api/v1/ack', shapes.ack(one.messages[0]!, one.leaseId));
    expect([acked.status, acked.body[0]?.success], acked.text).toEqual([200, true]);

    const two = await popOne(queue, 2);
    const batch = await api.call('POST', '/api/v1/ack/batch', shapes.ackBatch(two.messages, two.leaseId));
    expect([batch.status, batch.body.map((r: { success: boolean }) => r.success)], batch.text).toEqual([200, [true, true]]);

    const last = await popOne(queue);
    const tx = await api.call('POST', '/api/v1/transaction', shapes.transaction(last.messages[0]!, last.leaseId, queue));
    expect([tx.status, tx.body.success], tx.text).toEqual([200, true]);
    expect((await popOne(queue)).messages.map((m) => m.data)).toEqual([{ n: 'tx' }]);
  });

  it('pops with every query parameter the client sends, in a group and by namespace', async () => {
    const res = await api.call('GET', `/api/v1/pop/queue/${queue}?${new URLSearchParams(shapes.pop(`g-${name}`))}`);
    expect(res.status, res.text).not.toBe(400);
    const query = { ...shapes.pop(`g-${name}`), namespace: 'ns', task: 'work' };
    expect((await api.call('GET', `/api/v1/pop?${new URLSearchParams(query)}`)).status).not.toBe(400);
  });
});
