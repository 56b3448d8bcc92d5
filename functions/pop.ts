// GET /api/v1/pop/queue/:queue[/partition/:partition] and GET /api/v1/pop (discovery):
// docs/semantics.md#pop-and-leases, docs/semantics.md#wildcard-and-discovery-pops.
import type { Context } from 'hono';
import { popMessages } from '../lib/broker/pop.js';
import { brokerContext, defineFunction, requireRole, type BrokerEnv } from '../lib/http/context.js';
import { readPopRequest } from '../lib/http/requests/pop.js';
import { emptyAnswer, jsonAnswer } from '../lib/http/respond.js';

async function pop(c: Context<BrokerEnv>) {
  const req = readPopRequest(c);
  const result = await popMessages(c.get('db'), brokerContext(c), req);
  if (!result) return emptyAnswer(204);
  return jsonAnswer(result.body, 200, 'application/json; charset=UTF-8');
}

export default defineFunction('pop', (app) => {
  app.get('/api/v1/pop/queue/:queue', requireRole('read-write'), pop);
  app.get('/api/v1/pop/queue/:queue/partition/:partition', requireRole('read-write'), pop);
  app.get('/api/v1/pop', requireRole('read-write'), pop);
});
