// A private PostgreSQL 15 cluster in a temporary directory: one a
// test may stop, crash and restart without touching the shared server on 5432.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';

export type StopMode = 'fast' | 'immediate';

export interface PrivateCluster {
  port: number;
  dir: string;
  /** A URL for database `name` on this cluster. */
  url(name?: string): string;
  stop(mode: StopMode): Promise<void>;
  start(): Promise<void>;
  /** Stops with `mode`, stays down for `downMs`, starts again. */
  restart(mode: StopMode, downMs?: number): Promise<void>;
  /** The server log so far (deadlocks, FATALs, recovery). */
  log(): Promise<string>;
  dispose(): Promise<void>;
}

/** Whether this machine can make one: PostgreSQL 15 binaries, and root (initdb runs as postgres). */
export const canRunPrivateCluster = () => existsSync(join(BIN, 'initdb')) && process.getuid?.() === 0;

export async function privateCluster(port: number): Promise<PrivateCluster> {
  const dir = await mkdtemp(join(tmpdir(), `queen-pg-${port}-`));
  await chmod(dir, 0o777);
  const data = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const asPostgres = (cmd: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args], { cwd: dir });
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c log_min_messages=warning`;
  const start = async () => {
    await asPostgres('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start']);
  };
  const stop = async (mode: StopMode) => {
    await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  await start();
  return {
    port,
    dir,
    url: (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`,
    stop,
    start,
    async restart(mode, downMs = 300) {
      await stop(mode);
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    log: () => readFile(logFile, 'utf8').catch(() => ''),
    async dispose() {
      await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
