// POST /api/v1/push (SPEC §3.1): parse with payloads kept verbatim, push, answer 201.
import { parsePushItems, pushItems } from '../lib/broker/push.js';
import { badRequest } from '../lib/errors.js';
import { readText } from '../lib/http/body.js';
import { defineFunction, requireRole } from '../lib/http/context.js';
import { parseJsonRaw, type JsonPath } from '../lib/http/raw-json.js';

// Only items[i].payload is kept as source text; a "payload" key anywhere else is ordinary JSON.
const isItem = (path: JsonPath) => path.length === 2 && path[0] === 'items' && typeof path[1] === 'number';

export default defineFunction('push', (app) => {
  app.post('/api/v1/push', requireRole('read-write'), async (c) => {
    const config = c.get('config');
    const body = parseJsonRaw(await readText(c), { member: 'payload', where: isItem });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw badRequest('invalid_request', 'Request body must be a JSON object {"items": [...]}');
    }
    const items = parsePushItems((body as { items?: unknown }).items, config);
    const { tenant, sub } = c.get('principal');
    return c.json(await pushItems(c.get('db'), { tenant, sub, config }, items), 201);
  });
});
