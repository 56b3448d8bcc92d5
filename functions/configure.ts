// Configure, queue resources and consumer groups (SPEC §3.6, §3.7).
import type { Context } from 'hono';
import { configureQueue } from '../lib/broker/configure.js';
import { deleteConsumerGroup, listConsumerGroups } from '../lib/broker/consumer-groups.js';
import { deleteQueue, describeQueue, groupQueues, listQueues } from '../lib/broker/queues.js';
import { seekConsumerGroup } from '../lib/broker/seek.js';
import { defineFunction, requireRole, type BrokerEnv } from '../lib/http/context.js';
import { nameParam, nameQuery, readConfigureRequest, readSeekRequest } from '../lib/http/requests/configure.js';
import { dashboardRoutes } from './dashboard.js';

const tenant = (c: Context<BrokerEnv>) => c.get('principal').tenant;

export default defineFunction('configure', (app) => {
  dashboardRoutes(app);

  app.post('/api/v1/configure', requireRole('admin'), async (c) => {
    const req = await readConfigureRequest(c);
    return c.json(await configureQueue(c.get('db'), tenant(c), req));
  });

  app.get('/api/v1/resources/queues', requireRole('read-only'), async (c) => {
    const filter = { namespace: nameQuery(c, 'namespace'), task: nameQuery(c, 'task') };
    return c.json({ queues: await listQueues(c.get('db'), tenant(c), filter) });
  });

  app.get('/api/v1/resources/queues/:queue', requireRole('read-only'), async (c) =>
    c.json(await describeQueue(c.get('db'), tenant(c), nameParam(c, 'queue', 'queue'))),
  );

  app.delete('/api/v1/resources/queues/:queue', requireRole('admin'), async (c) =>
    c.json(await deleteQueue(c.get('db'), tenant(c), nameParam(c, 'queue', 'queue'))),
  );

  app.get('/api/v1/resources/namespaces', requireRole('read-only'), async (c) =>
    c.json({ namespaces: await groupQueues(c.get('db'), tenant(c), 'namespace') }),
  );

  app.get('/api/v1/resources/tasks', requireRole('read-only'), async (c) =>
    c.json({ tasks: await groupQueues(c.get('db'), tenant(c), 'task') }),
  );

  app.get('/api/v1/consumer-groups', requireRole('read-only'), async (c) =>
    c.json({ consumerGroups: await listConsumerGroups(c.get('db'), tenant(c), nameQuery(c, 'queue')) }),
  );

  app.post('/api/v1/consumer-groups/:group/queues/:queue/seek', requireRole('admin'), async (c) => {
    const { group, queue, target } = await readSeekRequest(c);
    return c.json(await seekConsumerGroup(c.get('db'), tenant(c), group, queue, target));
  });

  app.delete('/api/v1/consumer-groups/:group', requireRole('admin'), async (c) =>
    c.json(await deleteConsumerGroup(c.get('db'), tenant(c), nameParam(c, 'group', 'consumer group'))),
  );

  app.delete('/api/v1/consumer-groups/:group/queues/:queue', requireRole('admin'), async (c) =>
    c.json(await deleteConsumerGroup(c.get('db'), tenant(c), nameParam(c, 'group', 'consumer group'), nameParam(c, 'queue', 'queue'))),
  );
});
