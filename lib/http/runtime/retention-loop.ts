// The local server's retention schedule: the next run starts RETENTION_INTERVAL ms after the
// previous one ended, so runs never overlap; stop() waits for a run in progress. The job logs
// its own report; the loop logs only failures and carries on.
export interface RetentionLoop {
  stop(): Promise<void>;
}

export function startRetentionLoop(run: () => Promise<unknown>, intervalMs: number, log: (message: string, err?: unknown) => void): RetentionLoop {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    current = run()
      .then(
        () => undefined,
        (err: unknown) => log('retention failed', err),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
