// The README's five-minute tour and the plain-fetch example, run as a reader runs them: the tour's
// `sh tour` blocks in order in one bash, the example with node, both against `npm start`.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { root, startServer, type RunningServer } from '../support/server.js';
import { portFrom } from '../runtime/support.js';

const run = promisify(execFile);
const README_BASE = 'BASE=http://localhost:6632';

interface TourBlock {
  script: string;
  /** The `# → …` lines: each must match a line the block prints, `…` standing for anything. */
  expected: string[];
}

export function tourBlocks(readme: string): TourBlock[] {
  return [...readme.matchAll(/^```sh tour\n([\s\S]*?)^```$/gm)].map(([, script]) => ({
    script: script!,
    expected: [...script!.matchAll(/^# → (.*)$/gm)].map((m) => m[1]!),
  }));
}

const matcher = (expected: string) => new RegExp(`^${expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);

describe('the README', () => {
  let dir: string;
  let db: TestDatabase | undefined;
  let server: RunningServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-readme-'));
    db = testMode() === 'pg' ? await freshDatabase() : undefined;
    // As the tour says to start it: its last step delivers to a receiver on loopback.
    server = await startServer(dir, { PORT: String(await portFrom(7340, 7350)), DATABASE_URL: db?.url ?? '', QUEEN_DELIVERY_ALLOW_PRIVATE: '1' });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('tour runs as written against npm start, every block printing what it says it prints', async () => {
    const blocks = tourBlocks(await readFile(join(root, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks[0]!.script.split('\n')).toContain(README_BASE);
    // The reader's shell, with HTTP errors made fatal: curl exits non-zero on a 4xx or 5xx.
    const script = [
      'set -euo pipefail',
      'curl() { command curl --fail-with-body "$@"; }',
      ...blocks.map((b, i) => `${b.script.replace(README_BASE, `BASE=${server.url}`)}\nprintf '\\n@@block ${i}@@\\n'`),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], { cwd: dir }).catch((err: { stdout: string; stderr: string; code: number }) => {
      throw new Error(`the tour failed (exit ${err.code}):\n${err.stdout}\n${err.stderr}\n${server.output()}`);
    });
    const outputs = stdout.split(/\n@@block \d+@@\n/);
    blocks.forEach((block, i) => {
      const lines = outputs[i]!.split('\n');
      for (const expected of block.expected) {
        expect(lines.some((line) => matcher(expected).test(line)), `block ${i + 1} should print\n  ${expected}\nbut printed\n${outputs[i]}`).toBe(true);
      }
    });
  }, 60_000);

  it('plain-fetch example pushes, pops and acks with nothing but fetch on Node', async () => {
    const { stdout } = await run(process.execPath, [join(root, 'examples/fetch-client.mjs'), server.url], { cwd: dir });
    expect(stdout).toBe(['pushed: queued, queued, queued', 'popped: [{"order":1},{"order":2},{"order":3}]', 'acked: true', 'queue empty afterwards: true', ''].join('\n'));
  });
});
