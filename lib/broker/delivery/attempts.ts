// The attempts log is kept ATTEMPT_RETENTION_DAYS (docs/delivery.md): the retention job deletes
// older rows. Ids grow with time, so the old rows are a prefix walked by the primary key, a batch
// per statement, and a run stops at the first batch that holds a newer row.
import type { Queryable } from '../../db/types.js';

export const ATTEMPT_RETENTION_DAYS = 7;
const PURGE_BATCH = 5000;

const PURGE_SQL = `WITH d AS (
  DELETE FROM queen.subscription_attempts a
   WHERE a.id IN (SELECT x.id FROM queen.subscription_attempts x ORDER BY x.id LIMIT $2)
     AND a.at < now() - make_interval(days => $1)
  RETURNING 1)
SELECT count(*) AS n FROM d`;

/** Deletes delivery attempts older than `days`; returns how many. */
export async function purgeAttempts(db: Queryable, days = ATTEMPT_RETENTION_DAYS): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.query<{ n: string }>(PURGE_SQL, [days, PURGE_BATCH]);
    const n = Number(row!.n);
    total += n;
    if (n < PURGE_BATCH) return total;
  }
}
