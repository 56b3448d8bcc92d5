// The retention cron (docs/semantics.md#retention): no HTTP route. Deployed schedulers and the
// local server's timer call this with the deployment's database; it returns the per-queue counts
// and logs them when the run deleted something (a quiet minute is not news; failures are logged by
// the caller).
import type { Database } from '../lib/db/types.js';
import { runRetention, type RetentionReport } from '../lib/broker/retention.js';

export async function runScheduledRetention(db: Database, log: (line: string) => void = console.log): Promise<RetentionReport> {
  const report = await runRetention(db);
  if (report.segmentsDeleted + report.sidecarRowsPurged > 0) log(`retention: ${JSON.stringify(report)}`);
  return report;
}

export default runScheduledRetention;
