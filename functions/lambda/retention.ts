// AWS Lambda entry for the retention schedule (EventBridge Scheduler; hourly unless
// QUEEN_RETENTION_SCHEDULE says otherwise at deploy time; lib/jobs.ts).
import { createJobHandler } from '../../lib/http/runtime/lambda.js';
import { JOBS } from '../../lib/jobs.js';
import { JOB_RUNS } from '../jobs.js';

export const handler = createJobHandler(
  JOBS.find((j) => j.name === 'Retention')!,
  JOB_RUNS.Retention,
);
