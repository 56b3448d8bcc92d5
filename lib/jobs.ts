// The scheduled jobs and their schedules (docs/operations.md#scheduled-jobs), in one list the local
// server's timer, the Worker's `scheduled` and sst.config.ts's crons all read. No imports: the
// sst config loads this file at deploy time, where the broker's code has no business.

export type Schedule = `rate(${string})` | `cron(${string})`;

export interface Job {
  /** The job's key; also the AWS resource name of its schedule (sst.config.ts). */
  name: 'Retention' | 'DeliverySweep';
  /** The deployed schedule: an EventBridge expression or "off", read at deploy time (AWS) or from the bindings (Worker). */
  scheduleVar: string;
  defaultSchedule: Schedule;
  /** The local server's period in ms, from the previous run's end to the next run's start. */
  intervalVar: string;
  defaultIntervalMs: number;
  /** The Lambda the deployed schedule runs, and its time limit; a run stops starting work 10 s before it. */
  handler: string;
  timeoutSeconds: number;
}

export const JOBS: readonly Job[] = [
  {
    name: 'Retention',
    scheduleVar: 'QUEEN_RETENTION_SCHEDULE',
    // Each run wakes a suspended Neon compute for its 5-minute scale-to-zero window: every minute
    // would keep it running (and billed) around the clock, hourly costs at most 5 minutes an hour.
    defaultSchedule: 'rate(1 hour)',
    intervalVar: 'RETENTION_INTERVAL',
    defaultIntervalMs: 60_000,
    handler: 'functions/lambda/retention.handler',
    // Deletes go in statements of 10,000 segments: a run cut short leaves nothing half-done.
    timeoutSeconds: 300,
  },
  {
    name: 'DeliverySweep',
    scheduleVar: 'QUEEN_DELIVERY_SCHEDULE',
    // The sweep picks up due retries, expired leases and what a trigger missed; pushes trigger
    // delivery at once. A minute keeps a Neon compute awake: docs/delivery.md says what it costs.
    defaultSchedule: 'rate(1 minute)',
    intervalVar: 'DELIVERY_INTERVAL',
    defaultIntervalMs: 1_000,
    handler: 'functions/lambda/deliver.handler',
    // Under the 1-minute default, so one run ends before the next starts.
    timeoutSeconds: 60,
  },
];

export type JobName = Job['name'];

/**
 * How long a local run may start work: its interval, but at least 10 s, so a delivery sweep on a
 * backlog is not idle half the time (the local server's stop() cuts a run short).
 */
export const localRunMs = (intervalMs: number) => Math.max(intervalMs, 10_000);

/** How logs and the local server's banner name a job: "retention", "delivery sweep". */
export const jobLabel = (job: Job) => job.name.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase();
type Env = Record<string, string | undefined>;

/** A job's deployed schedule from its variable: enabled with an expression, or off. Throws naming the variable. */
export function jobSchedule(job: Job, env: Env): { schedule: Schedule; enabled: boolean } {
  const value = env[job.scheduleVar]?.trim() || job.defaultSchedule;
  if (value === 'off') return { schedule: job.defaultSchedule, enabled: false };
  if (!/^(rate|cron)\(.+\)$/.test(value)) {
    throw new Error(`${job.scheduleVar} must be rate(…), cron(…) or off, e.g. "rate(6 hours)"; got "${value}"`);
  }
  return { schedule: value as Schedule, enabled: true };
}

/** The local server's period for a job, ms; null when its variable says off (or 0). */
export function jobInterval(job: Job, env: Env): number | null {
  const raw = env[job.intervalVar]?.trim();
  if (!raw) return job.defaultIntervalMs;
  if (raw === 'off' || raw === '0') return null;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0) throw new Error(`${job.intervalVar} must be a period in ms or off, got "${raw}"`);
  return ms;
}

/**
 * The Cloudflare cron trigger (5 fields) that runs as often as an EventBridge expression:
 * rate(N minutes|hours|days) in whole steps of the next unit, cron(…) without its year and `?`.
 */
export function cronTrigger(schedule: Schedule): string {
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(schedule);
  if (rate) {
    const n = Number(rate[1]);
    const every = (limit: number) => {
      if (n === 1) return '*';
      if (n < 1 || limit % n !== 0) throw new Error(`${schedule} has no cron trigger form: use a step that divides ${limit}, or cron(…)`);
      return `*/${n}`;
    };
    if (rate[2] === 'minute') return `${every(60)} * * * *`;
    if (rate[2] === 'hour') return `0 ${every(24)} * * *`;
    return n === 1 ? '0 0 * * *' : `0 0 */${n} * *`;
  }
  const cron = /^cron\((.+)\)$/.exec(schedule);
  const fields = cron?.[1]!.trim().split(/\s+/) ?? [];
  if (fields.length !== 6) throw new Error(`${schedule} is neither rate(N minutes|hours|days) nor a 6-field cron(…)`);
  return fields
    .slice(0, 5)
    .map((f) => (f === '?' ? '*' : f))
    .join(' ');
}

/** The jobs a Worker runs for the cron trigger that fired: each enabled job whose schedule it is. */
export function jobsForCron(cron: string, env: Env): Job[] {
  return JOBS.filter((job) => {
    const { schedule, enabled } = jobSchedule(job, env);
    return enabled && cronTrigger(schedule) === cron;
  });
}
