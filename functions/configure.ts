// Configure, queue resources and consumer groups (docs/semantics.md#configure,
// docs/semantics.md#consumer-groups-and-seek, docs/semantics.md#queens-other-routes).
import { configureQueue } from '../lib/broker/configure.js';
import {
  consumerGroupDetail,
  deleteConsumerGroup,
  laggingPartitions,
  listConsumerGroups,
  refreshStats,
  updateSubscription,
} from '../lib/broker/consumer-groups.js';
import { deleteQueue, describeQueue, groupQueues, listQueues, resourcesOverview } from '../lib/broker/queues.js';
import { seekConsumerGroup, seekPartitionToEnd } from '../lib/broker/seek.js';
import { brokerContext, defineFunction, requireRole } from '../lib/http/context.js';
import {
  nameParam,
  nameQuery,
  readConfigureRequest,
  readDeleteMetadata,
  readMinLagSeconds,
  readPartitionSeek,
  readSeekRequest,
  readSubscriptionUpdate,
} from '../lib/http/requests/configure.js';
import { dashboardRoutes } from './dashboard.js';

export default defineFunction('configure', (app) => {
  dashboardRoutes(app);

  app.post('/api/v1/configure', requireRole('admin'), async (c) => {
    const req = await readConfigureRequest(c);
    return c.json(await configureQueue(c.get('db'), brokerContext(c), req));
  });

  app.get('/api/v1/resources/queues', requireRole('read-only'), async (c) => {
    const filter = { namespace: nameQuery(c, 'namespace'), task: nameQuery(c, 'task') };
    return c.json({ queues: await listQueues(c.get('db'), brokerContext(c), filter) });
  });

  app.get('/api/v1/resources/overview', requireRole('read-only'), async (c) =>
    c.json(await resourcesOverview(c.get('db'), brokerContext(c))),
  );

  app.get('/api/v1/resources/queues/:queue', requireRole('read-only'), async (c) =>
    c.json(await describeQueue(c.get('db'), brokerContext(c), nameParam(c, 'queue', 'queue'))),
  );

  app.delete('/api/v1/resources/queues/:queue', requireRole('admin'), async (c) =>
    c.json(await deleteQueue(c.get('db'), brokerContext(c), nameParam(c, 'queue', 'queue'))),
  );

  app.get('/api/v1/resources/namespaces', requireRole('read-only'), async (c) =>
    c.json({ namespaces: await groupQueues(c.get('db'), brokerContext(c), 'namespace') }),
  );

  app.get('/api/v1/resources/tasks', requireRole('read-only'), async (c) =>
    c.json({ tasks: await groupQueues(c.get('db'), brokerContext(c), 'task') }),
  );

  app.get('/api/v1/consumer-groups', requireRole('read-only'), async (c) =>
    c.json(await listConsumerGroups(c.get('db'), brokerContext(c), nameQuery(c, 'queue'))),
  );

  // Before /consumer-groups/:group, which would otherwise take "lagging" for a group name.
  app.get('/api/v1/consumer-groups/lagging', requireRole('read-only'), async (c) =>
    c.json(await laggingPartitions(c.get('db'), brokerContext(c), readMinLagSeconds(c))),
  );

  app.get('/api/v1/consumer-groups/:group', requireRole('read-only'), async (c) =>
    c.json(await consumerGroupDetail(c.get('db'), brokerContext(c), nameParam(c, 'group', 'consumer group'))),
  );

  // The core client's updateConsumerGroupTimestamp: an application call, so read-write.
  app.post('/api/v1/consumer-groups/:group/subscription', requireRole('read-write'), async (c) => {
    return c.json(await updateSubscription(c.get('db'), brokerContext(c), await readSubscriptionUpdate(c)));
  });

  app.post('/api/v1/consumer-groups/:group/queues/:queue/seek', requireRole('admin'), async (c) => {
    return c.json(await seekConsumerGroup(c.get('db'), brokerContext(c), await readSeekRequest(c)));
  });

  app.post('/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek', requireRole('admin'), async (c) => {
    return c.json(await seekPartitionToEnd(c.get('db'), brokerContext(c), readPartitionSeek(c)));
  });

  app.delete('/api/v1/consumer-groups/:group', requireRole('admin'), async (c) => {
    const req = { group: nameParam(c, 'group', 'consumer group'), deleteMetadata: readDeleteMetadata(c) };
    return c.json(await deleteConsumerGroup(c.get('db'), brokerContext(c), req));
  });

  app.delete('/api/v1/consumer-groups/:group/queues/:queue', requireRole('admin'), async (c) => {
    const group = nameParam(c, 'group', 'consumer group');
    const req = { group, queue: nameParam(c, 'queue', 'queue'), deleteMetadata: readDeleteMetadata(c) };
    return c.json(await deleteConsumerGroup(c.get('db'), brokerContext(c), req));
  });

  app.post('/api/v1/stats/refresh', requireRole('admin'), (c) => c.json(refreshStats()));
});
