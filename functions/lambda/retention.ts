// AWS Lambda entry for the retention cron (EventBridge schedule, every minute).
import { createCronHandler } from '../../lib/http/runtime/lambda.js';
import runScheduledRetention from '../retention.js';

export const handler = createCronHandler((db) => runScheduledRetention(db));
