// The local server's schedule for the jobs of lib/jobs.ts: each job's next run starts its
// interval after the previous one ended, so a job never overlaps itself; stop() aborts the runs in
// progress (a delivery sweep stops claiming and waiting) and waits for them. Jobs log their own
// reports; the loop logs only failures and carries on.
export interface LocalJob {
  name: string;
  intervalMs: number;
  run: (signal: AbortSignal) => Promise<unknown>;
}

export interface JobLoop {
  stop(): Promise<void>;
}

export function startJobLoop(jobs: readonly LocalJob[], log: (message: string, err?: unknown) => void): JobLoop {
  const timers = new Map<string, NodeJS.Timeout>();
  const current = new Map<string, Promise<void>>();
  let stopped = false;
  const stopping = new AbortController();
  const schedule = (job: LocalJob) => {
    timers.set(
      job.name,
      setTimeout(() => {
        const run = job
          .run(stopping.signal)
          .then(
            () => undefined,
            (err: unknown) => log(`${job.name.toLowerCase()} failed`, err),
          )
          .finally(() => {
            current.delete(job.name);
            if (!stopped) schedule(job);
          });
        current.set(job.name, run);
      }, job.intervalMs),
    );
  };
  for (const job of jobs) schedule(job);
  return {
    async stop() {
      stopped = true;
      stopping.abort();
      for (const t of timers.values()) clearTimeout(t);
      await Promise.all(current.values());
    },
  };
}
