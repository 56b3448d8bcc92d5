// The local server as a user or operator runs it: a checkout (a folder with the project's files, so
// ./.queen lands there), started with `npm start` or with the `node --import tsx server.ts` that
// npm start execs, each in its own process group.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testMode } from './mode.js';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const CHECKOUT = ['package.json', 'server.ts', 'functions', 'lib', 'drizzle', 'node_modules', 'tsconfig.json'];

export async function checkout(): Promise<{ dir: string; dispose(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'queen-checkout-'));
  for (const entry of CHECKOUT) await symlink(join(root, entry), join(dir, entry));
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

// 7400-7424 for `npm test`, 7425-7449 for `npm run test:pg`, so the two suites can run at once.
let next = testMode() === 'pg' ? 7425 : 7400;

export async function portInRange(): Promise<number> {
  while (next < (testMode() === 'pg' ? 7450 : 7425)) {
    const port = next++;
    if (await canListen(port)) return port;
  }
  throw new Error('no free port left in this suite’s range');
}

/** The first free loopback port at or after `from`, below `to`: servers the tests start stay in the deploy range. */
export async function portFrom(from: number, to = from + 10): Promise<number> {
  for (let port = from; port < to; port++) if (await canListen(port)) return port;
  throw new Error(`no free port in ${from}..${to - 1}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

export interface Started {
  /** The spawned process: npm, or the server itself. */
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function start(cwd: string, how: 'npm' | 'node', env: Record<string, string>): Started {
  // Absolute paths, so any folder can be the working directory (where ./.queen lands).
  const [command, args] =
    how === 'npm' ? ['npm', ['start']] : [process.execPath, ['--import', import.meta.resolve('tsx'), join(root, 'server.ts')]];
  const child = spawn(command, args as string[], {
    cwd,
    detached: true,
    env: { ...process.env, RETENTION_INTERVAL: '500', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves with the server's URL once its start-up banner is out; rejects if it exits first. */
export async function listening(s: Started): Promise<string> {
  let gone = false;
  void s.exited.then(() => (gone = true));
  await waitFor('the server to listen', () => {
    if (gone) throw new Error(`server exited before listening:\n${s.output()}`);
    return s.output().includes('then: curl');
  });
  return /listening on (http:\/\/\S+)/.exec(s.output())![1]!;
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 90_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid of the server npm started (npm execs it, so it is npm's only child). */
export async function serverPidUnder(npm: ChildProcess): Promise<number> {
  const children = (await readFile(`/proc/${npm.pid}/task/${npm.pid}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean);
  if (children.length !== 1) throw new Error(`npm has ${children.length} children, expected the server alone`);
  return Number(children[0]);
}

/** Alive and not a zombie (an orphan's zombie lingers until its new parent reaps it). */
export async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

export function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

export interface RunningServer extends Started {
  url: string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** The server exactly as `npm start` runs it, ready once it has printed its URL and first request. */
export async function startServer(cwd: string, env: Record<string, string>): Promise<RunningServer> {
  const started = start(cwd, 'node', { PORT: '0', ...env });
  const url = await listening(started);
  const stop = () => {
    if (started.child.exitCode === null) started.child.kill('SIGTERM');
    return started.exited;
  };
  return { ...started, url, stop };
}
