// `server.ts` (npm start) as a child process in its own process group, so its CPU, and that of
// anything it spawns (tsx's esbuild service), is read over the group.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { groupCpuSeconds } from './cpu.js';

/** The checkout these benchmarks are in. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The checkout whose server.ts runs: this one, or BENCH_SERVER_DIR (A/B against another branch). */
export const SERVER_DIR = resolve(process.env.BENCH_SERVER_DIR ?? ROOT);

export interface Server {
  base: URL;
  pid: number;
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface ServerOptions {
  databaseUrl: string;
  port: number;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/x']. */
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** The checkout whose server.ts runs (default SERVER_DIR). */
  dir?: string;
}

export async function startServer(options: ServerOptions): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'server.ts'], {
    cwd: options.dir ?? SERVER_DIR,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      PORT: String(options.port),
      HOST: '127.0.0.1',
      QUEEN_AUTH: 'none',
      // The retention loop would run inside measured windows; benchmarks of it are separate.
      RETENTION_INTERVAL: String(24 * 3600 * 1000),
      ...options.env,
    },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((ok, fail) => {
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('listening on')) ok();
    });
    child.once('exit', (code) => fail(new Error(`server.ts exited with ${code} before listening:\n${seen}`)));
  });
  child.stdout!.resume();
  const pid = child.pid!;
  return {
    base: new URL(`http://127.0.0.1:${options.port}`),
    pid,
    cpuSeconds: () => groupCpuSeconds(pid),
    stop: () => stopGroup(pid, exited),
  };
}

/** SIGTERM to a detached child's process group, SIGKILL after 10 s; resolves when it has exited. */
export async function stopGroup(pid: number, exited: Promise<void>): Promise<void> {
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => process.kill(-pid, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
