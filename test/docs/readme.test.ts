// The README's five-minute tour, its client snippet and the client example, run as a reader runs
// them: the tour's `sh tour` blocks in order in one bash, the JavaScript with node, against `npm start`.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { portFrom, root, startServer, type RunningServer } from '../support/server.js';
import { expectPrinted } from './quoted.js';

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

describe('the README', () => {
  let dir: string;
  let db: TestDatabase | undefined;
  let server: RunningServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-readme-'));
    db = testMode() === 'pg' ? await freshDatabase() : undefined;
    // As the tour says to start it: its last step delivers to a receiver on loopback.
    server = await startServer(dir, {
      PORT: String(await portFrom(7340, 7350)),
      DATABASE_URL: db?.url ?? '',
      RETENTION_INTERVAL: '60000',
      QUEEN_DELIVERY_ALLOW_PRIVATE: '1',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('tour runs as written against npm start, every block printing what it says it prints, and runs again on the same data', async () => {
    const blocks = tourBlocks(await readFile(join(root, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    expect(blocks[0]!.script.split('\n')).toContain(README_BASE);
    // The reader's shell, with HTTP errors made fatal: curl exits non-zero on a 4xx or 5xx.
    const script = [
      'set -euo pipefail',
      'curl() { command curl --fail-with-body "$@"; }',
      ...blocks.map((b, i) => `${b.script.replace(README_BASE, `BASE=${server.url}`)}\nprintf '\\n@@block ${i}@@\\n'`),
    ].join('\n');
    // A reader who runs it again finds what the first run left in the database.
    for (const attempt of ['first', 'second']) {
      const { stdout } = await run('bash', ['-c', script], { cwd: dir }).catch((err: { stdout: string; stderr: string; code: number }) => {
        throw new Error(`the ${attempt} run of the tour failed (exit ${err.code}):\n${err.stdout}\n${err.stderr}\n${server.output()}`);
      });
      const outputs = stdout.split(/\n@@block \d+@@\n/);
      blocks.forEach((block, i) => expectPrinted(block.expected, outputs[i]!, `the ${attempt} run's block ${i + 1}`));
    }
  }, 120_000);

  it('prints the start-up banner docs/operations.md quotes', async () => {
    const doc = await readFile(join(root, 'docs/operations.md'), 'utf8');
    const banner = /then prints:\n\n```text\n([\s\S]*?)```/.exec(doc)![1]!.trim().split('\n');
    expect(banner).toHaveLength(5);
    const port = new URL(server.url).port;
    expectPrinted(
      banner.map((l) => l.replaceAll('localhost:6632', `localhost:${port}`)).filter((l) => !db || !l.includes('PGlite')),
      server.output(),
      'npm start',
    );
  });

  it('client example pushes, consumes and acks on Node, printing what docs/clients.md says', async () => {
    const { stdout } = await run(process.execPath, [join(root, 'examples/client.mjs'), server.url], { cwd: dir });
    expect(stdout).toBe(
      ['pushed: queued, queued, queued', 'consumed: [{"order":1},{"order":2},{"order":3}]', 'queue empty afterwards: true', ''].join('\n'),
    );
    const clients = await readFile(join(root, 'docs/clients.md'), 'utf8');
    expect(clients).toContain(`\`\`\`text\n${stdout}\`\`\``);
  });

  it("'in your code' snippet runs as written against npm start, with the installed client", async () => {
    const [, snippet] = /^```js in-your-code\n([\s\S]*?)^```$/m.exec(await readFile(join(root, 'README.md'), 'utf8')) ?? [];
    expect(snippet).toContain("from 'queen-serverless-client'");
    // A project where the package is installed: the repository's node_modules links the workspace.
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules')).catch(() => {});
    await writeFile(join(dir, 'snippet.mjs'), snippet!.replace('http://localhost:6632', server.url));
    const { stdout } = await run(process.execPath, ['snippet.mjs'], { cwd: dir, timeout: 30_000 });
    expect(stdout).toBe('sending ada@example.com\n');
  });
});
