// AWS Lambda entry for the retention schedule (EventBridge Scheduler; hourly unless
// QUEEN_RETENTION_SCHEDULE says otherwise at deploy time).
import { createCronHandler } from '../../lib/http/runtime/lambda.js';
import runScheduledRetention from '../retention.js';

export const handler = createCronHandler((db) => runScheduledRetention(db));
