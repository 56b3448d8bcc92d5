// DLQ listing, message detail, retry and delete (docs/semantics.md#dlq-retry-and-delete), and
// message traces (docs/semantics.md#queens-other-routes).
import type { Context } from 'hono';
import { deleteDlq, listDlq, moveToDlq, retryDlq } from '../lib/broker/dead-letter.js';
import { listMessages } from '../lib/broker/message-list.js';
import { getMessage } from '../lib/broker/messages.js';
import { redriveDlq } from '../lib/broker/redrive.js';
import { recordTrace, traceNames, tracesByName, tracesOfMessage } from '../lib/broker/traces.js';
import { afterPush, brokerContext, defineFunction, requireRole, type BrokerEnv } from '../lib/http/context.js';
import {
  readDlqAddress,
  readDlqQuery,
  readMessageAddress,
  readMessageFilter,
  readRetryAddress,
  readTrace,
  readTraceNamesPage,
  readTracesByName,
} from '../lib/http/requests/dlq.js';
import { readRedrive } from '../lib/http/requests/delivery.js';

// Payloads are spliced in verbatim, so these bodies arrive as finished JSON text.
const json = (c: Context<BrokerEnv>, text: string) => c.body(text, 200, { 'content-type': 'application/json; charset=UTF-8' });

export default defineFunction('dlq', (app) => {
  app.get('/api/v1/dlq', requireRole('read-only'), async (c) => json(c, await listDlq(c.get('db'), brokerContext(c), readDlqQuery(c))));

  app.post('/api/v1/dlq/redrive', requireRole('admin'), async (c) => {
    const filter = await readRedrive(c);
    const result = await redriveDlq(c.get('db'), brokerContext(c), filter);
    // Re-pushed messages are pushes: a subscription of the queue delivers them at once.
    if (result.redriven > 0) await afterPush(c, [{ status: 'queued', queueName: filter.queue }]);
    return c.json(result);
  });

  app.get('/api/v1/messages', requireRole('read-only'), async (c) =>
    c.body(await listMessages(c.get('db'), brokerContext(c), readMessageFilter(c)), 200, { 'content-type': 'application/json' }),
  );

  app.get('/api/v1/messages/:partitionId/:transactionId', requireRole('read-only'), async (c) => {
    return json(c, await getMessage(c.get('db'), brokerContext(c), readMessageAddress(c)));
  });

  app.post('/api/v1/messages/:partitionId/:transactionId/retry', requireRole('admin'), async (c) => {
    const a = await readRetryAddress(c);
    const { answer, queue } = await retryDlq(c.get('db'), brokerContext(c), a);
    await afterPush(c, [{ status: 'queued', queueName: queue }]);
    return c.json(answer);
  });

  app.post('/api/v1/messages/:partitionId/:transactionId/dlq', requireRole('admin'), () => moveToDlq());

  app.delete('/api/v1/messages/:partitionId/:transactionId', requireRole('admin'), async (c) => {
    return c.json(await deleteDlq(c.get('db'), brokerContext(c), readDlqAddress(c)));
  });

  app.post('/api/v1/traces', requireRole('read-write'), async (c) =>
    c.json(await recordTrace(c.get('db'), brokerContext(c), await readTrace(c)), 201),
  );

  // Hono matches in registration order: the literal paths before /traces/:partitionId/:transactionId.
  app.get('/api/v1/traces/names', requireRole('read-only'), async (c) =>
    c.json(await traceNames(c.get('db'), brokerContext(c), readTraceNamesPage(c))),
  );

  app.get('/api/v1/traces/by-name/:name', requireRole('read-only'), async (c) => {
    return c.json(await tracesByName(c.get('db'), brokerContext(c), readTracesByName(c)));
  });

  app.get('/api/v1/traces/:partitionId/:transactionId', requireRole('read-only'), async (c) => {
    return c.json(await tracesOfMessage(c.get('db'), brokerContext(c), readMessageAddress(c)));
  });
});
