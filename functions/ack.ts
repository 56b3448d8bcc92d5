// POST /api/v1/ack, /ack/batch, /lease/:leaseId/extend and /transaction (docs/semantics.md#acks,
// docs/semantics.md#lease-extend, docs/semantics.md#transactions).
import { ackMessages } from '../lib/broker/ack.js';
import { extendLease } from '../lib/broker/lease.js';
import { runTransaction } from '../lib/broker/transaction.js';
import { afterPush, brokerContext, defineFunction, requireRole } from '../lib/http/context.js';
import { readAck, readAckBatch, readLeaseExtend, readTransaction } from '../lib/http/requests/ack.js';
import { jsonAnswer } from '../lib/http/respond.js';

export default defineFunction('ack', (app) => {
  app.post('/api/v1/ack', requireRole('read-write'), async (c) => {
    const items = await readAck(c);
    return jsonAnswer(JSON.stringify(await ackMessages(c.get('db'), brokerContext(c), items)));
  });

  app.post('/api/v1/ack/batch', requireRole('read-write'), async (c) => {
    const items = await readAckBatch(c);
    return jsonAnswer(JSON.stringify(await ackMessages(c.get('db'), brokerContext(c), items)));
  });

  app.post('/api/v1/lease/:leaseId/extend', requireRole('read-write'), async (c) => {
    const { leaseId, seconds } = await readLeaseExtend(c);
    return c.json(await extendLease(c.get('db'), brokerContext(c), { leaseId, seconds }));
  });

  app.post('/api/v1/transaction', requireRole('read-write'), async (c) => {
    const request = await readTransaction(c);
    const response = await runTransaction(c.get('db'), brokerContext(c), request);
    // A rolled-back transaction pushed nothing.
    if (response.success)
      await afterPush(
        c,
        response.results.flatMap((r) => (r.type === 'push' ? [r] : [])),
      );
    return c.json(response);
  });
});
