// GET /api/v1/pop/queue/:queue[/partition/:partition] and GET /api/v1/pop (discovery):
// docs/semantics.md#pop-and-leases, docs/semantics.md#wildcard-and-discovery-pops.
import type { Context } from 'hono';
import { popMessages } from '../lib/broker/pop.js';
import { defineFunction, requireRole, type BrokerEnv } from '../lib/http/context.js';
import { readPopRequest } from '../lib/http/requests/pop.js';

async function pop(c: Context<BrokerEnv>) {
  const req = readPopRequest(c);
  const result = await popMessages(c.get('db'), { tenant: c.get('principal').tenant, config: c.get('config') }, req);
  if (!result) return c.body(null, 204);
  return c.body(result.body, 200, { 'content-type': 'application/json; charset=UTF-8' });
}

export default defineFunction('pop', (app) => {
  app.get('/api/v1/pop/queue/:queue', requireRole('read-write'), pop);
  app.get('/api/v1/pop/queue/:queue/partition/:partition', requireRole('read-write'), pop);
  app.get('/api/v1/pop', requireRole('read-write'), pop);
});
