// What each scheduled job of lib/jobs.ts runs. The local timer, the Worker's cron and the Lambda
// schedules all call these with the deployment's database and a deadline: a run starts no new
// work after it, nor once `signal` aborts (retention's statements are short enough to ignore both).
import { runDelivery } from '../lib/broker/delivery/dispatch.js';
import type { Config } from '../lib/config.js';
import type { Database } from '../lib/db/types.js';
import type { JobName } from '../lib/jobs.js';
import runScheduledRetention from './retention.js';

export type JobRun = (
  db: Database,
  config: Config,
  deadline: number,
  log: (line: string, err?: unknown) => void,
  signal?: AbortSignal,
) => Promise<unknown>;

export const JOB_RUNS: Record<JobName, JobRun> = {
  Retention: (db, _config, _deadline, log) => runScheduledRetention(db, log),
  // The sweep: due retries, expired leases, and whatever a trigger after a push missed.
  DeliverySweep: async (db, config, deadline, log, signal) => {
    const report = await runDelivery(db, config, { deadline, log, signal });
    if (report.batches > 0) log(`delivery sweep: ${JSON.stringify(report)}`);
    return report;
  },
};
