// POST /api/v1/ack, /ack/batch, /lease/:leaseId/extend and /transaction (SPEC §3.3-§3.5).
import { ackMessages, parseAckBatch, parseAckItem } from '../lib/broker/ack.js';
import { extendLease, parseExtendSeconds } from '../lib/broker/lease.js';
import { parseOperations, runTransaction } from '../lib/broker/transaction.js';
import { readJson, readText } from '../lib/http/body.js';
import { defineFunction, requireRole } from '../lib/http/context.js';
import { parseJsonRaw, type JsonPath } from '../lib/http/raw-json.js';

// operations[i].items[j].payload is kept as source text, as push keeps it.
const isPushItem = (p: JsonPath) => p.length === 4 && p[0] === 'operations' && p[2] === 'items' && typeof p[3] === 'number';

export default defineFunction('ack', (app) => {
  app.post('/api/v1/ack', requireRole('read-write'), async (c) => {
    const item = parseAckItem(await readJson(c), 'body');
    return c.json(await ackMessages(c.get('db'), { tenant: c.get('principal').tenant }, [item]));
  });

  app.post('/api/v1/ack/batch', requireRole('read-write'), async (c) => {
    const items = parseAckBatch(await readJson(c));
    return c.json(await ackMessages(c.get('db'), { tenant: c.get('principal').tenant }, items));
  });

  app.post('/api/v1/lease/:leaseId/extend', requireRole('read-write'), async (c) => {
    const seconds = parseExtendSeconds(await readJson(c, true));
    return c.json(await extendLease(c.get('db'), c.get('principal').tenant, c.req.param('leaseId'), seconds));
  });

  app.post('/api/v1/transaction', requireRole('read-write'), async (c) => {
    const body = parseJsonRaw(await readText(c), { member: 'payload', where: isPushItem });
    const { tenant, sub } = c.get('principal');
    const config = c.get('config');
    return c.json(await runTransaction(c.get('db'), { tenant, sub, config }, parseOperations(body, config)));
  });
});
