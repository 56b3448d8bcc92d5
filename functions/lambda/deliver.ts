// AWS Lambda entry for delivery (docs/delivery.md#dispatch): the Push, Ack and Dlq functions invoke
// it asynchronously after a push to a subscribed queue, and the delivery sweep's schedule
// (QUEEN_DELIVERY_SCHEDULE, every minute by default; lib/jobs.ts) runs it for everything due.
import { ensureZstd } from '../../lib/codec/zstd.js';
import { createDeliverHandler } from '../../lib/http/runtime/lambda.js';
import { JOBS } from '../../lib/jobs.js';
import { JOB_RUNS } from '../jobs.js';

// Compiling zstd's WASM during Lambda's init phase: every batch is read from segments.
void ensureZstd().catch(() => {});

export const handler = createDeliverHandler(
  JOBS.find((j) => j.name === 'DeliverySweep')!,
  JOB_RUNS.DeliverySweep,
);
