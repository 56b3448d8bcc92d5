// Expand and contract (docs/operations.md#upgrades-and-migrations): a deploy migrates before it
// updates the functions, and a rollback redeploys the previous release on the newer schema, so the
// previous release's broker must keep working on this version's SQL. The previous release is taken
// from git history: main as it was before the merge (or commit) that brought the newest migration,
// run from `git archive` as a deployed function (schema check included) against one PostgreSQL with the current code.
import { execFileSync, execSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateWithReport, readMigrations } from '../../lib/db/migrate.js';
import { schemaGuard } from '../../lib/http/runtime/database.js';
import { testClient, type PopBody } from '../support/client.js';
import { emptyDatabase, type TestDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { portFrom, root, waitFor } from '../support/server.js';

const git = (...args: string[]) =>
  execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

/**
 * main before the newest migration landed, or why there is none to test. --first-parent: a branch
 * merged with several migrations counts as one release, not as the commits inside it.
 */
function previousRelease(): { rev: string; newest: string } | { missing: string } {
  try {
    if (git('rev-parse', '--is-shallow-repository') === 'true')
      return { missing: 'this is a shallow clone; git fetch --unshallow gives the history it needs' };
    // Another release to try, e.g. the one a deployment runs today: QUEEN_PREVIOUS_RELEASE=<commit>.
    const asked = process.env.QUEEN_PREVIOUS_RELEASE;
    if (asked) return { rev: git('rev-parse', '--verify', `${asked}^{commit}`), newest: 'HEAD' };
    const newest = git('log', '-1', '--first-parent', '--format=%H', '--', 'drizzle/meta/_journal.json');
    if (!newest) return { missing: 'git history holds no commit that added a migration' };
    return { rev: git('rev-parse', '--verify', `${newest}^`), newest };
  } catch {
    return { missing: 'no git history here (not a git checkout, or git is not installed)' };
  }
}

// Runs the previous release's own code: its migrate step, or its functions as one deployed app.
const DRIVER = `
const env = process.env;
if (process.argv[2] === 'migrate') {
  const { migrateDeployed } = await import('./lib/http/runtime/migrations.ts');
  console.log(JSON.stringify(await migrateDeployed(env.DATABASE_URL)));
} else {
  const { serve } = await import('@hono/node-server');
  const { allFunctions } = await import('./functions/index.ts');
  const { instanceDatabase } = await import('./lib/http/runtime/lambda.ts');
  const { buildDeployedApp } = await import('./lib/http/runtime/deployed.ts');
  const app = buildDeployedApp(allFunctions, env, instanceDatabase(env));
  serve({ fetch: app.fetch, port: Number(env.PORT), hostname: '127.0.0.1' }, () => console.log('listening'));
}
`;

const release = previousRelease();
const pg = testMode() === 'pg';

describe.runIf(pg && 'missing' in release)('the previous release', () => {
  it.skip(`cannot be tested: ${'missing' in release ? release.missing : ''}`, () => {});
});

describe.runIf(pg && 'rev' in release)("the previous release on this version's schema", () => {
  const rev = 'rev' in release ? release.rev : '';
  let dir: string;
  let db: TestDatabase;
  const servers: ChildProcess[] = [];

  const runOld = (args: string[], env: Record<string, string>) =>
    spawn(process.execPath, ['--import', import.meta.resolve('tsx'), 'previous-broker.ts', ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', QUEEN_AUTH: 'none', DATABASE_URL: db.url!, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  async function migrateOld(): Promise<void> {
    const child = runOld(['migrate'], {});
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code, out).toBe(0);
  }

  /** The previous release's functions, cold: each call goes through its schema check first. */
  async function startOld() {
    const port = await portFrom(7380, 7400);
    const child = runOld(['serve'], { PORT: String(port) });
    servers.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await waitFor(`the previous release (${rev.slice(0, 7)}) to listen`, () => {
      if (child.exitCode !== null) throw new Error(`it exited:\n${out}`);
      return out.includes('listening');
    });
    return async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, text };
    };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-previous-'));
    execSync(`git -C '${root}' archive --format=tar ${rev} | tar -x -C '${dir}'`);
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
    await writeFile(join(dir, 'previous-broker.ts'), DRIVER);
    db = await emptyDatabase();
  }, 120_000);
  afterAll(async () => {
    for (const s of servers) if (s.exitCode === null) s.kill('SIGTERM');
    await db?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const item = (n: number) => ({ queue: 'deploy', partition: 'p', payload: { n }, transactionId: `m${n}` });
  const ackOf = (pop: PopBody, status: string) => ({
    acknowledgments: pop.messages.map((m) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: pop.leaseId,
      status,
    })),
  });

  it('keeps serving through a deploy that migrates under it, and after a rollback onto the newer schema', async () => {
    // Before the deploy: the previous release migrated the database and serves it.
    await migrateOld();
    await expect(schemaGuard()(db), 'this version refuses a schema older than it needs').rejects.toMatchObject({
      status: 503,
      code: 'schema_outdated',
    });
    const during = await startOld();
    expect((await during('POST', '/api/v1/configure', { queue: 'deploy', options: { retryLimit: 0 } })).status).toBe(200);
    expect((await during('POST', '/api/v1/push', { items: [item(1), item(2)] })).status).toBe(201);
    const leased = (await during('GET', '/api/v1/pop/queue/deploy?batch=1')).body as PopBody;
    expect(leased.messages.map((m) => m.transactionId)).toEqual(['m1']);

    // The deploy migrates with this version while the previous release still serves.
    const newest = readMigrations().at(-1)!.tag;
    expect((await migrateWithReport(db)).applied).toContain(newest);
    await expect(schemaGuard()(db)).resolves.toBeUndefined();
    const acked = await during('POST', '/api/v1/ack/batch', ackOf(leased, 'completed'));
    expect(
      acked.body.map((r: { success: boolean }) => r.success),
      acked.text,
    ).toEqual([true]);

    // A rollback: the previous release's functions start cold on the newer schema.
    const rolledBack = await startOld();
    expect((await rolledBack('GET', '/health')).body.status).toBe('healthy');
    expect((await rolledBack('POST', '/api/v1/configure', { queue: 'deploy', options: { retryLimit: 0, leaseTime: 30 } })).status).toBe(
      200,
    );
    const second = (await rolledBack('GET', '/api/v1/pop/queue/deploy?batch=5')).body as PopBody;
    expect(second.messages.map((m) => m.transactionId)).toEqual(['m2']);
    const failed = await rolledBack('POST', '/api/v1/ack/batch', ackOf(second, 'failed'));
    expect(
      failed.body.map((r: { success: boolean; dlq: boolean }) => [r.success, r.dlq]),
      failed.text,
    ).toEqual([[true, true]]);
    const dlq = (await rolledBack('GET', '/api/v1/dlq?queue=deploy')).body;
    expect(dlq.messages.map((m: { transactionId: string }) => m.transactionId)).toEqual(['m2']);
    expect((await rolledBack('POST', `/api/v1/messages/${second.partitionId}/m2/retry`)).status).toBe(200);
    expect((await rolledBack('POST', '/api/v1/push', { items: [item(3)] })).status).toBe(201);

    // Rolled forward again, this version reads what the previous release wrote, and the reverse.
    const current = testClient(db);
    const next = (await current.popQueue('deploy', { batch: 10 })).body as PopBody;
    expect(next.messages.map((m) => m.data)).toEqual([{ n: 2 }, { n: 3 }]);
    expect(
      (await current.call('POST', '/api/v1/ack/batch', ackOf(next, 'completed'))).body.every((r: { success: boolean }) => r.success),
    ).toBe(true);
    expect((await current.call('POST', '/api/v1/push', { items: [item(4)] })).status).toBe(201);
    const last = (await rolledBack('GET', '/api/v1/pop/queue/deploy?batch=10')).body as PopBody;
    expect(last.messages.map((m) => m.data)).toEqual([{ n: 4 }]);
    expect((await rolledBack('POST', '/api/v1/ack/batch', ackOf(last, 'completed'))).body[0].success).toBe(true);
    expect((await current.popQueue('deploy')).status).toBe(204);
  }, 240_000);
});
