// Subscriptions: push delivery of a consumer group to an HTTP endpoint (docs/delivery.md). Reads
// need read-only, changes admin; another tenant's subscription is a missing one.
import { createSubscription, deleteSubscription, rotateSecret, updateSubscription } from '../lib/broker/delivery/subscriptions.js';
import { listSubscriptions, subscriptionAttempts, subscriptionDetail } from '../lib/broker/delivery/views.js';
import { brokerContext, defineFunction, requireRole } from '../lib/http/context.js';
import {
  readAttemptPage,
  readNewSubscription,
  readSubscriptionChange,
  readSubscriptionId,
  readSubscriptionQuery,
} from '../lib/http/requests/delivery.js';

export default defineFunction('delivery', (app) => {
  app.post('/api/v1/subscriptions', requireRole('admin'), async (c) => {
    const req = await readNewSubscription(c);
    return c.json(await createSubscription(c.get('db'), brokerContext(c), req), 201);
  });

  app.get('/api/v1/subscriptions', requireRole('read-only'), async (c) =>
    c.json(await listSubscriptions(c.get('db'), brokerContext(c), readSubscriptionQuery(c))),
  );

  app.get('/api/v1/subscriptions/:id', requireRole('read-only'), async (c) =>
    c.json(await subscriptionDetail(c.get('db'), brokerContext(c), readSubscriptionId(c))),
  );

  app.patch('/api/v1/subscriptions/:id', requireRole('admin'), async (c) => {
    const id = readSubscriptionId(c);
    return c.json(await updateSubscription(c.get('db'), brokerContext(c), id, await readSubscriptionChange(c)));
  });

  app.delete('/api/v1/subscriptions/:id', requireRole('admin'), async (c) =>
    c.json(await deleteSubscription(c.get('db'), brokerContext(c), readSubscriptionId(c))),
  );

  app.post('/api/v1/subscriptions/:id/rotate-secret', requireRole('admin'), async (c) =>
    c.json(await rotateSecret(c.get('db'), brokerContext(c), readSubscriptionId(c)), 201),
  );

  app.get('/api/v1/subscriptions/:id/attempts', requireRole('read-only'), async (c) => {
    const page = readAttemptPage(c);
    return c.json(await subscriptionAttempts(c.get('db'), brokerContext(c), { id: readSubscriptionId(c), ...page }));
  });
});
