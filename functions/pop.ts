// GET /api/v1/pop/queue/:queue[/partition/:partition] and GET /api/v1/pop (discovery), SPEC §3.2.
import type { Context } from 'hono';
import { parsePopRequest, popMessages } from '../lib/broker/pop.js';
import { defineFunction, requireRole, type BrokerEnv } from '../lib/http/context.js';

async function pop(c: Context<BrokerEnv>) {
  const req = parsePopRequest(c.req.param(), c.req.query());
  const result = await popMessages(c.get('db'), { tenant: c.get('principal').tenant, config: c.get('config') }, req);
  if (!result) return c.body(null, 204);
  return c.body(result.body, 200, { 'content-type': 'application/json; charset=UTF-8' });
}

export default defineFunction('pop', (app) => {
  app.get('/api/v1/pop/queue/:queue', requireRole('read-write'), pop);
  app.get('/api/v1/pop/queue/:queue/partition/:partition', requireRole('read-write'), pop);
  app.get('/api/v1/pop', requireRole('read-write'), pop);
});
