// CPU of the server's process group, of PostgreSQL (postmaster and children) and of this process,
// over one measured window.
import { groupCpuSeconds, selfCpuSeconds, treeCpuSeconds } from './cpu.js';

export interface Usage {
  server: number;
  postgres: number;
  /** This process: the load generator, and pg-boss when it is the system measured. */
  self: number;
}

export class Meter {
  constructor(
    private readonly serverPgid: number,
    private readonly postmasterPid: number,
  ) {}

  read(): Usage {
    return { server: groupCpuSeconds(this.serverPgid), postgres: treeCpuSeconds(this.postmasterPid), self: selfCpuSeconds() };
  }

  async window<T>(fn: () => Promise<T>): Promise<{ out: T; cpu: Usage }> {
    const a = this.read();
    const out = await fn();
    const b = this.read();
    return { out, cpu: { server: b.server - a.server, postgres: b.postgres - a.postgres, self: b.self - a.self } };
  }
}

export const addUsage = (xs: readonly Usage[]): Usage => ({
  server: xs.reduce((n, u) => n + u.server, 0),
  postgres: xs.reduce((n, u) => n + u.postgres, 0),
  self: xs.reduce((n, u) => n + u.self, 0),
});

/** Microseconds per message. */
export const perMsg = (seconds: number, msgs: number) => (msgs > 0 ? (seconds * 1e6) / msgs : NaN);
