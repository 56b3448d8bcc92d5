// POST /api/v1/push (docs/semantics.md#push): parse with payloads kept verbatim, push, let the
// runtime start delivery to subscribed queues (docs/delivery.md#dispatch), answer 201.
import { pushItems } from '../lib/broker/push.js';
import { afterPush, brokerContext, defineFunction, requireRole } from '../lib/http/context.js';
import { readPushRequest } from '../lib/http/requests/push.js';
import { jsonAnswer } from '../lib/http/respond.js';

export default defineFunction('push', (app) => {
  app.post('/api/v1/push', requireRole('read-write'), async (c) => {
    const items = await readPushRequest(c);
    const results = await pushItems(c.get('db'), brokerContext(c), items);
    await afterPush(c, results);
    return jsonAnswer(JSON.stringify(results), 201);
  });
});
