// The pieces of the runtimes that need no database: the jobs and their schedules (lib/jobs.ts),
// the local job timer, and the URL the deploy's migration step uses.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databaseHost, isDatabaseUrl } from '../../lib/db/client.js';
import { directUrl } from '../../lib/http/runtime/database.js';
import { startJobLoop } from '../../lib/http/runtime/job-loop.js';
import { cronTrigger, jobInterval, jobSchedule, JOBS, jobsForCron, type Job } from '../../lib/jobs.js';
import { root } from '../support/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const job = (name: Job['name']) => JOBS.find((j) => j.name === name)!;

describe('the local job loop', () => {
  it('runs every job on its own interval, never overlapping a job with itself, and stop() waits for the runs in progress', async () => {
    const running = { a: 0, b: 0 };
    const runs = { a: 0, b: 0 };
    let overlapped = false;
    const run = (k: 'a' | 'b', ms: number) => async () => {
      overlapped ||= running[k] > 0;
      running[k]++;
      await sleep(ms);
      running[k]--;
      runs[k]++;
    };
    const loop = startJobLoop(
      [
        { name: 'A', intervalMs: 1, run: run('a', 30) },
        { name: 'B', intervalMs: 1, run: run('b', 5) },
      ],
      () => {},
    );
    while (runs.a < 3) await sleep(5);
    await loop.stop();
    expect(running).toEqual({ a: 0, b: 0 });
    expect(overlapped).toBe(false);
    // B, five times quicker, ran more often: one job does not wait for the other.
    expect(runs.b).toBeGreaterThan(runs.a);
    const after = { ...runs };
    await sleep(50);
    expect(runs).toEqual(after);
  });

  it('aborts the signal of a run in progress on stop(), so a run waiting for work ends at once', async () => {
    let started = false;
    let sawAbort = false;
    const loop = startJobLoop(
      [
        {
          name: 'DeliverySweep',
          intervalMs: 1,
          run: (signal) =>
            new Promise<void>((resolve) => {
              started = true;
              signal.addEventListener('abort', () => ((sawAbort = true), resolve()), { once: true });
            }),
        },
      ],
      () => {},
    );
    while (!started) await sleep(5);
    const t0 = Date.now();
    await loop.stop();
    expect(sawAbort).toBe(true);
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('logs a failed run under the job name and keeps the schedule going', async () => {
    const logged: string[] = [];
    let calls = 0;
    const loop = startJobLoop(
      [
        {
          name: 'Retention',
          intervalMs: 1,
          run: async () => {
            calls++;
            if (calls === 1) throw new Error('database restarting');
          },
        },
      ],
      (m) => logged.push(m),
    );
    while (calls < 3) await sleep(5);
    await loop.stop();
    expect(logged).toEqual(['retention failed']);
  });
});

describe('the jobs and their schedules', () => {
  it('are retention (hourly, every 60 s locally) and the delivery sweep (every minute, every second locally)', () => {
    expect(JOBS.map((j) => [j.name, jobSchedule(j, {}), jobInterval(j, {})])).toEqual([
      ['Retention', { schedule: 'rate(1 hour)', enabled: true }, 60_000],
      ['DeliverySweep', { schedule: 'rate(1 minute)', enabled: true }, 1_000],
    ]);
  });

  it('take their schedule from their variable, "off" included, and refuse what EventBridge would not take', () => {
    expect(jobSchedule(job('DeliverySweep'), { QUEEN_DELIVERY_SCHEDULE: 'rate(5 minutes)' })).toEqual({
      schedule: 'rate(5 minutes)',
      enabled: true,
    });
    expect(jobSchedule(job('DeliverySweep'), { QUEEN_DELIVERY_SCHEDULE: 'off' }).enabled).toBe(false);
    expect(() => jobSchedule(job('DeliverySweep'), { QUEEN_DELIVERY_SCHEDULE: 'every minute' })).toThrow(
      /QUEEN_DELIVERY_SCHEDULE must be rate\(…\), cron\(…\) or off.*"every minute"/,
    );
    expect(jobInterval(job('DeliverySweep'), { DELIVERY_INTERVAL: '250' })).toBe(250);
    expect(jobInterval(job('DeliverySweep'), { DELIVERY_INTERVAL: 'off' })).toBeNull();
    expect(() => jobInterval(job('Retention'), { RETENTION_INTERVAL: '1m' })).toThrow(/RETENTION_INTERVAL must be a period in ms or off/);
  });

  it.each([
    ['rate(1 minute)', '* * * * *'],
    ['rate(15 minutes)', '*/15 * * * *'],
    ['rate(1 hour)', '0 * * * *'],
    ['rate(6 hours)', '0 */6 * * *'],
    ['rate(1 day)', '0 0 * * *'],
    ['cron(0 3 * * ? *)', '0 3 * * *'],
    ['cron(30 2 ? * MON-FRI *)', '30 2 * * MON-FRI'],
  ] as const)('turn the EventBridge schedule %s into the Cloudflare cron trigger %s', (schedule, cron) => {
    expect(cronTrigger(schedule)).toBe(cron);
  });

  it('refuse a rate a cron trigger cannot express', () => {
    expect(() => cronTrigger('rate(7 minutes)')).toThrow(/divides 60/);
  });

  it("pick the Worker's job(s) by the cron trigger that fired, and none that is off", () => {
    expect(jobsForCron('0 * * * *', {}).map((j) => j.name)).toEqual(['Retention']);
    expect(jobsForCron('* * * * *', {}).map((j) => j.name)).toEqual(['DeliverySweep']);
    expect(jobsForCron('* * * * *', { QUEEN_DELIVERY_SCHEDULE: 'off' })).toEqual([]);
    expect(
      jobsForCron('*/5 * * * *', { QUEEN_DELIVERY_SCHEDULE: 'rate(5 minutes)', QUEEN_RETENTION_SCHEDULE: 'rate(5 minutes)' }).map(
        (j) => j.name,
      ),
    ).toEqual(['Retention', 'DeliverySweep']);
  });

  it("match wrangler.jsonc's cron triggers, one per job", async () => {
    const text = await readFile(join(root, 'wrangler.jsonc'), 'utf8');
    const crons = JSON.parse(/"crons":\s*(\[[^\]]*\])/.exec(text)![1]!) as string[];
    expect(crons).toEqual(JOBS.map((j) => cronTrigger(jobSchedule(j, {}).schedule)));
  });
});

describe('database URLs in libpq socket form', () => {
  it('are accepted and named by their socket directory; malformed ones are not', () => {
    const socket = 'postgres://postgres@/queen?host=%2Fvar%2Frun%2Fpostgresql&port=5432';
    expect([isDatabaseUrl(socket), databaseHost(socket)]).toEqual([true, '/var/run/postgresql']);
    expect(databaseHost('postgres://u:p@db.example.com:6543/q')).toBe('db.example.com:6543');
    expect(databaseHost('postgres://u:p@db.example.com:6543/q', { port: false })).toBe('db.example.com');
    for (const bad of ['not a url', 'postgres://bad host/db', 'postgres://u@/db?host=/x y'])
      expect([bad, isDatabaseUrl(bad)]).toEqual([bad, false]);
  });
});

describe('directUrl', () => {
  it("turns Neon's pooled host into the direct endpoint the migrations need, keeping everything else", () => {
    expect(directUrl('postgres://u:p@ep-cool-darkness-123456-pooler.us-east-2.aws.neon.tech/neondb?sslmode=require')).toBe(
      'postgres://u:p@ep-cool-darkness-123456.us-east-2.aws.neon.tech/neondb?sslmode=require',
    );
    expect(directUrl('postgres://postgres@127.0.0.1:5432/queen')).toBe('postgres://postgres@127.0.0.1:5432/queen');
    // libpq's socket form, which WHATWG URL refuses: already direct, passed through.
    expect(directUrl('postgres://postgres@/queen?host=%2Fvar%2Frun%2Fpostgresql')).toBe(
      'postgres://postgres@/queen?host=%2Fvar%2Frun%2Fpostgresql',
    );
  });
});
