// Queen's own benchmark runner (queen-mq/queen benchmark-queen/2026-04-26/_runner), unchanged,
// and Queen's C++ server built as /work/shared/FACTS.md says: what bench/queen-side.ts drives.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { groupCpuSeconds } from './cpu.js';
import { stopGroup, type Server } from './server.js';

const RUNNER_PATH = 'benchmark-queen/2026-04-26/_runner';

/** A directory holding bench-producer.js and bench-consumer.js as the repository has them, and their two dependencies. */
export function prepareRunner(repo: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const f of ['bench-producer.js', 'bench-consumer.js']) {
    writeFileSync(join(dir, f), execFileSync('git', ['--git-dir', repo, 'show', `HEAD:${RUNNER_PATH}/${f}`]));
  }
  if (!existsSync(join(dir, 'node_modules/autocannon')) || !existsSync(join(dir, 'node_modules/axios'))) {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'queen-runner', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', 'autocannon@8', 'axios@1'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

export interface RunnerResult {
  /** The producer's JSON result line (msgPerSec, totalMessages, latency, errors, non2xx). */
  producer: Record<string, any>;
  consumer: Record<string, any>;
}

/** Producer and consumer at once against `url`, as Queen's run scripts start them. */
export async function runQueenLoad(
  dir: string,
  url: string,
  queue: string,
  msgsPerPush: number,
  seconds: number,
  consume = true,
): Promise<RunnerResult> {
  const env = {
    ...process.env,
    SERVER_URL: url,
    QUEUE_NAMES: queue,
    DURATION: String(seconds),
    MSGS_PER_PUSH: String(msgsPerPush),
    CONNECTIONS_PER_WORKER: '50',
    MAX_PARTITION: '1000',
    CONSUMER_BATCH: '100',
  };
  const run = (script: string) =>
    new Promise<Record<string, any>>((ok, fail) => {
      const child = spawn(process.execPath, [script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', (code) => {
        const at = out.indexOf('{\n');
        if (code !== 0 || at < 0) fail(new Error(`${script} exited with ${code}:\n${out}`));
        else ok(JSON.parse(out.slice(at)));
      });
    });
  // The producer configures the queue first; the consumer's first pops may find it missing.
  const producer = run('bench-producer.js');
  await sleep(300);
  const consumer = consume ? run('bench-consumer.js') : Promise.resolve({ errors: 0, non2xx: 0, timeouts: 0 });
  return { producer: await producer, consumer: await consumer };
}

/** Queen's server binary, from `cwd` (it applies ./schema at boot), on its own database. */
export async function startQueenServer(
  binary: string,
  cwd: string,
  pg: { port: number; database: string; host?: string },
  port: number,
): Promise<Server> {
  const child = spawn(binary, [], {
    cwd,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      PG_HOST: pg.host ?? '127.0.0.1',
      PG_PORT: String(pg.port),
      PG_DB: pg.database,
      PG_USER: 'postgres',
      PG_PASSWORD: '',
      NUM_WORKERS: '2',
      DB_POOL_SIZE: '10',
      SIDECAR_POOL_SIZE: '10',
      LOG_LEVEL: 'warn',
    },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const base = new URL(`http://127.0.0.1:${port}`);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${binary} exited with ${child.exitCode}`);
    const up = await fetch(new URL('/health', base)).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 300) throw new Error(`${binary} did not answer /health in 60 s`);
    await sleep(200);
  }
  const pid = child.pid!;
  return {
    base,
    pid,
    cpuSeconds: () => groupCpuSeconds(pid),
    stop: () => stopGroup(pid, exited),
  };
}
