// Subscriptions: push delivery of a consumer group to an HTTP endpoint (docs/delivery.md). Reads
// need read-only, changes admin; another tenant's subscription is a missing one.
import type { Context } from 'hono';
import { createSubscription, deleteSubscription, rotateSecret, subscriptionNotFound, updateSubscription } from '../lib/broker/delivery/subscriptions.js';
import { findSubscription, listAttempts, listSubscriptions, subscriptionDetail } from '../lib/broker/delivery/views.js';
import { defineFunction, requireRole, type BrokerEnv } from '../lib/http/context.js';
import {
  readAttemptPage,
  readNewSubscription,
  readSubscriptionChange,
  readSubscriptionId,
  readSubscriptionQuery,
} from '../lib/http/requests/delivery.js';

const scope = (c: Context<BrokerEnv>) => ({ tenant: c.get('principal').tenant, config: c.get('config') });

async function ownSubscription(c: Context<BrokerEnv>) {
  const id = readSubscriptionId(c);
  const row = await findSubscription(c.get('db'), c.get('principal').tenant, id);
  if (!row) throw subscriptionNotFound(id);
  return row;
}

export default defineFunction('delivery', (app) => {
  app.post('/api/v1/subscriptions', requireRole('admin'), async (c) => {
    const req = await readNewSubscription(c);
    return c.json(await createSubscription(c.get('db'), scope(c), req), 201);
  });

  app.get('/api/v1/subscriptions', requireRole('read-only'), async (c) =>
    c.json(await listSubscriptions(c.get('db'), c.get('config'), c.get('principal').tenant, readSubscriptionQuery(c).queue)),
  );

  app.get('/api/v1/subscriptions/:id', requireRole('read-only'), async (c) =>
    c.json(await subscriptionDetail(c.get('db'), c.get('config'), await ownSubscription(c))),
  );

  app.patch('/api/v1/subscriptions/:id', requireRole('admin'), async (c) => {
    const id = readSubscriptionId(c);
    return c.json(await updateSubscription(c.get('db'), scope(c), id, await readSubscriptionChange(c)));
  });

  app.delete('/api/v1/subscriptions/:id', requireRole('admin'), async (c) =>
    c.json(await deleteSubscription(c.get('db'), c.get('principal').tenant, readSubscriptionId(c))),
  );

  app.post('/api/v1/subscriptions/:id/rotate-secret', requireRole('admin'), async (c) =>
    c.json(await rotateSecret(c.get('db'), scope(c), readSubscriptionId(c)), 201),
  );

  app.get('/api/v1/subscriptions/:id/attempts', requireRole('read-only'), async (c) => {
    const page = readAttemptPage(c);
    const row = await ownSubscription(c);
    return c.json({ attempts: await listAttempts(c.get('db'), row.id, page) });
  });
});
