// `npx queen-serverless …` as an operator runs it: the bin as a child process, from the repository
// and from elsewhere, against `npm start` on the real PostgreSQL with auth on.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import { shippedMigrations } from '../../lib/db/schema-version.js';

const NEWEST = shippedMigrations().at(-1)!.tag;
import { freshDatabase, type TestDatabase } from '../support/db.js';
import { adminUrl, databaseUrl, overSocket, testMode } from '../support/mode.js';
import { portFrom, root, start, startServer, type RunningServer } from '../support/server.js';
import { JWT_SECRET } from '../../support/lambda.js';
import { expectPrinted, quotedAfter, textBlockAfter } from '../docs/quoted.js';
import { readFile } from 'node:fs/promises';

const BIN = join(root, 'bin/queen-serverless.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with exactly `env` (plus PATH): nothing leaks in from the test's own environment. */
function cli(args: string[], env: Record<string, string> = {}, options: { cwd?: string; command?: string[] } = {}): Promise<Run> {
  const [file, ...pre] = options.command ?? [process.execPath, BIN];
  return new Promise((resolve) => {
    execFile(
      file!,
      [...pre, ...args],
      { cwd: options.cwd ?? root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const verify = async (jwt: string) => (await jwtVerify(jwt.trim(), new TextEncoder().encode(JWT_SECRET))).payload;

describe('queen-serverless token', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says in one line how to give it a key when neither JWT_SECRET nor --key-file is set, exit 2', async () => {
    const run = await cli(['token', '--role', 'admin', '--tenant', 'acme', '--sub', 'me']);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(
      "queen-serverless: no signing key: set JWT_SECRET to the deployment's secret, or pass --key-file <file that holds it>\n",
    );
  });

  it('refuses a JWT_SECRET shorter than 32 bytes in one line that says how to make one, exit 2', async () => {
    const run = await cli(['token', '--role', 'admin'], { JWT_SECRET: 'abc' });
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(
      /^queen-serverless: JWT_SECRET is 3 byte\(s\); it must be at least 32 random bytes\. Make one with `openssl rand -base64 32`.*\n$/,
    );
    expect(run.stderr.split('\n')).toHaveLength(2);
  });

  it('npm start with auth on refuses such a JWT_SECRET in one line, before it opens the database', async () => {
    const s = start(dir, 'node', { PORT: '0', QUEEN_AUTH: 'jwt', JWT_SECRET: 'abc', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(await s.exited).toBe(1);
    expect(s.output().trim().split('\n')).toEqual([
      expect.stringMatching(
        /^queen: JWT_SECRET is 3 byte\(s\); it must be at least 32 random bytes\. Make one with `openssl rand -base64 32`/,
      ),
    ]);
  });

  it('signs the role, tenant, subject and expiry the deployment reads, with the secret from JWT_SECRET', async () => {
    const run = await cli(['token', '--role', 'admin', '--tenant', 'acme', '--sub', 'me', '--expires', '2h'], { JWT_SECRET });
    expect(run.code, run.stderr).toBe(0);
    const claims = await verify(run.stdout);
    expect(claims).toMatchObject({ role: 'admin', tenant: 'acme', sub: 'me' });
    expect(claims.exp! - claims.iat!).toBe(7200);
  });

  it('reads the secret from --key-file without its trailing newline, and honours JWT_TENANT_CLAIM and JWT_ISSUER', async () => {
    const keyFile = join(dir, 'jwt-secret');
    await writeFile(keyFile, `${JWT_SECRET}\n`);
    const run = await cli(['token', '--role', 'read-only', '--tenant', 'acme', '--key-file', keyFile], {
      JWT_TENANT_CLAIM: 'org',
      JWT_ISSUER: 'https://id.example.com',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(await verify(run.stdout)).toMatchObject({ role: 'read-only', org: 'acme', iss: 'https://id.example.com' });
  });

  it.each([
    [['--role', 'boss'], /--role must be one of admin, read-write, read-only, got "boss"/],
    [['--role', 'admin', '--expires', 'soon'], /--expires must be a time span such as 30m, 1h or 7d, got "soon"/],
    [['--role', 'admin', '--key-file', '/nonexistent/key'], /cannot read --key-file \/nonexistent\/key: ENOENT/],
    [['--role', 'admin', '--tennant', 'acme'], /Unknown option '--tennant'/],
  ])('refuses %j with a one-line message and exit 2', async (args, message) => {
    const run = await cli(['token', ...args], { JWT_SECRET });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('runs as `npx queen-serverless` in the repository and as `npx <package path>` from any other folder', async () => {
    const inRepo = await cli(['queen-serverless', 'token', '--role', 'admin'], { JWT_SECRET }, { command: ['npx', '--no-install'] });
    expect(inRepo.code, inRepo.stderr).toBe(0);
    expect((await verify(inRepo.stdout)).role).toBe('admin');
    const elsewhere = await cli([root, 'token', '--role', 'read-write'], { JWT_SECRET }, { command: ['npx', '--yes'], cwd: dir });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect((await verify(elsewhere.stdout)).role).toBe('read-write');
  }, 60_000);
});

describe('queen-serverless migrate and retention without DATABASE_URL', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-cli-local-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says in one line how to point it at a database when there is no ./.queen, exit 2', async () => {
    const run = await cli(['retention'], {}, { cwd: dir });
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(
      'queen-serverless: DATABASE_URL is not set and there is no ./.queen here: set DATABASE_URL=postgres://user:password@host/database, or run this in the folder where npm start keeps its data\n',
    );
  });

  it("migrates, checks and runs retention on npm start's ./.queen, and refuses while a server holds its lock", async () => {
    await mkdir(join(dir, '.queen'));
    const migrated = await cli(['migrate'], {}, { cwd: dir });
    expect(migrated.stdout, migrated.stderr).toMatch(
      new RegExp(`^migrated \\./\\.queen \\(PGlite\\): [1-9]\\d* migration\\(s\\) applied, schema at ${NEWEST}\n$`),
    );
    expect(await cli(['migrate', '--check'], {}, { cwd: dir })).toMatchObject({
      code: 0,
      stdout: `schema is current: migration ${NEWEST}\n`,
    });
    const retained = await cli(['retention'], {}, { cwd: dir });
    expect(retained.stdout, retained.stderr).toMatch(/^deleted 0 segment\(s\) holding 0 message\(s\) in 0 queue\(s\)/m);
    // This test's own process stands in for a running server.
    await writeFile(join(dir, '.queen', 'server.pid'), `${process.pid}\n`);
    const locked = await cli(['retention'], {}, { cwd: dir });
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(
      new RegExp(
        `^queen-serverless: Another queen server \\(pid ${process.pid}\\) is using .*npm start migrates at boot and runs retention itself\\.\n$`,
      ),
    );
  }, 120_000);
});

describe.skipIf(testMode() !== 'pg')('queen-serverless against npm start', () => {
  let dir: string;
  let db: TestDatabase;
  let server: RunningServer;
  const env = () => ({ DATABASE_URL: db.url! });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'queen-cli-'));
    db = await freshDatabase();
    const port = await portFrom(7350, 7360);
    server = await startServer(dir, {
      PORT: String(port),
      DATABASE_URL: db.url!,
      QUEEN_AUTH: 'jwt',
      JWT_SECRET,
      RETENTION_INTERVAL: '3600000',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints a banner whose commands, run as printed, mint a token and push and pop with it', async () => {
    const lines = server.output().split('\n');
    expect(lines).toContain('auth is ON (QUEEN_AUTH=jwt): every route but /health needs a bearer token');
    const commands = lines.filter((l) => /^(first|try|then): /.test(l)).map((l) => l.replace(/^\w+: /, ''));
    expect(commands).toHaveLength(3);
    const script = [
      'set -euo pipefail',
      'curl() { command curl -s --fail-with-body "$@"; }',
      ...commands.map((c) => c.replace('npx queen-serverless', `${process.execPath} ${BIN}`)),
    ].join('\n');
    const run = await new Promise<Run>((resolve) =>
      execFile('bash', ['-c', script], { cwd: root, env: { PATH: process.env.PATH ?? '', JWT_SECRET } }, (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/"status":"queued".*"data":\{"hello":"world"\}/s);
  });

  it('mints tokens the server accepts for their role and refuses above it', async () => {
    const mint = async (role: string) => (await cli(['token', '--role', role, '--sub', 'ops'], { JWT_SECRET })).stdout.trim();
    const configure = (jwt: string) =>
      fetch(`${server.url}/api/v1/configure`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: '{"queue":"cli-roles"}',
      });
    expect((await configure(await mint('admin'))).status).toBe(200);
    expect((await configure(await mint('read-write'))).status).toBe(403);
  });

  it('smoke-tests the server step by step with an admin token minted from JWT_SECRET, and deletes its queue', async () => {
    const run = await cli(['smoke', server.url], { JWT_SECRET });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const steps = run.stdout.trim().split('\n');
    expect(steps[0]).toBe(`smoke test of ${server.url} (auth: admin token minted from JWT_SECRET)`);
    expect(steps.slice(1, -1).map((l) => l.replace(/ \(\d+ ms\)$/, '').replace(/smoke-[0-9a-f-]{36}/, 'Q'))).toEqual([
      'ok    GET /health',
      'ok    configure Q with retryLimit 0',
      'ok    push two messages',
      'ok    pop the first and ack it completed',
      'ok    pop the second and ack it failed: it goes to the DLQ',
      'ok    list the DLQ',
      'ok    retry the dead letter',
      'ok    pop the retried message and ack it completed',
      'ok    the queue is empty',
      'ok    delete Q',
    ]);
    expect(steps.at(-1)).toBe('smoke test passed');
    expect(await db.query("SELECT name FROM queen.queues WHERE name LIKE 'smoke-%'")).toEqual([]);
    // docs/operations.md quotes this run; its times and queue name are the … of the quote.
    const quoted = textBlockAfter(
      await readFile(join(root, 'docs/operations.md'), 'utf8'),
      'npx queen-serverless smoke http://localhost:6632',
    );
    const loose = (l: string) => l.replace('http://localhost:6632', server.url).replace(/\(\d+ ms\)$/, '(… ms)');
    expect(quoted.map(loose)).toEqual(steps.map(loose).map((l) => l.replace(/smoke-[0-9a-f-]{36}/, 'smoke-…')));
  });

  it('fails the smoke test with exit 1 at the step the token may not take, and goes no further', async () => {
    const writer = (await cli(['token', '--role', 'read-write'], { JWT_SECRET })).stdout.trim();
    const run = await cli(['smoke', server.url, '--token', writer]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^ok {4}GET \/health/m);
    expect(run.stdout).toMatch(
      /^FAIL {2}configure smoke-\S+ with retryLimit 0: configure: expected HTTP 200, got 403 .*"code":"forbidden"/m,
    );
    expect(run.stdout).not.toMatch(/push two messages|smoke test passed/);
    expect(run.stderr).toBe('queen-serverless: smoke test failed\n');
  });

  it('fails the smoke test at the health step when nothing answers at the URL', async () => {
    const closed = `http://127.0.0.1:${await portFrom(7360, 7370)}`;
    const run = await cli(['smoke', closed], {});
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL {2}GET \/health: fetch failed/m);
  });

  it('migrates an empty database, and --check tells a current schema from one that is behind', async () => {
    const name = `queen_t${process.ppid}_${process.pid}_cli_migrate`;
    const admin = await connect({ url: adminUrl(), driver: 'pg', max: 1 });
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const target = { DATABASE_URL: databaseUrl(name) };
      const before = await cli(['migrate', '--check'], target);
      expect(before).toMatchObject({ code: 1, stdout: '' });
      expect(before.stderr).toMatch(/^queen-serverless: schema_outdated: The database schema is not migrated\. .*\n$/);
      const migrated = await cli(['migrate'], target);
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toMatch(new RegExp(`^migrated 127\\.0\\.0\\.1: [1-9]\\d* migration\\(s\\) applied, schema at ${NEWEST}\\n$`));
      const checked = await cli(['migrate', '--check'], target);
      expect(checked).toMatchObject({ code: 0, stdout: `schema is current: migration ${NEWEST}\n` });
      // What the Cloudflare guide and operations.md quote, the guide's Neon host standing for this one.
      const guide = await readFile(join(root, 'docs/deploy-cloudflare.md'), 'utf8');
      const neon = (l: string) => l.replace('ep-cool-darkness-123456.eu-central-1.aws.neon.tech', '127.0.0.1');
      expectPrinted(quotedAfter(guide, 'npx queen-serverless migrate').map(neon), migrated.stdout, 'migrate');
      expectPrinted(quotedAfter(guide, 'npx queen-serverless migrate --check'), checked.stdout, 'migrate --check');
      expectPrinted(
        textBlockAfter(await readFile(join(root, 'docs/operations.md'), 'utf8'), 'makes the same check from a shell'),
        checked.stdout,
        'migrate --check',
      );
      expect((await cli(['migrate'], target)).stdout).toMatch(/: 0 migration\(s\) applied/);
      // The same database over PostgreSQL's Unix socket, in the URL form pg takes and WHATWG URL refuses.
      const socket = await overSocket(admin, name);
      expect(await cli(['migrate'], { DATABASE_URL: socket.url })).toMatchObject({
        code: 0,
        stdout: `migrated ${socket.dir}: 0 migration(s) applied, schema at ${NEWEST}\n`,
      });
      expect(await cli(['migrate', '--check'], { DATABASE_URL: socket.url })).toMatchObject({
        code: 0,
        stdout: `schema is current: migration ${NEWEST}\n`,
      });
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    }
  });

  it('runs retention once and prints what it deleted', async () => {
    const admin = (await cli(['token', '--role', 'admin'], { JWT_SECRET })).stdout.trim();
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post('/api/v1/configure', { queue: 'logs', options: { retentionEnabled: true, retentionSeconds: 60 } })).status).toBe(
      200,
    );
    expect(
      (
        await post('/api/v1/push', {
          items: [
            { queue: 'logs', payload: 1 },
            { queue: 'logs', payload: 2 },
          ],
        })
      ).status,
    ).toBe(201);
    await db.query(
      "UPDATE queen.log_segments s SET created_at = now() - interval '2 hours' FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE s.partition_id = p.id AND q.name = 'logs'",
    );
    const run = await cli(['retention'], env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^retention: \{.*"queue":"logs".*"segmentsDeleted":1/m);
    expect(run.stdout).toMatch(/^deleted 1 segment\(s\) holding 2 message\(s\) in 1 queue\(s\)/m);
    expectPrinted(
      textBlockAfter(await readFile(join(root, 'docs/operations.md'), 'utf8'), 'the command prints it:'),
      run.stdout,
      'retention',
    );
  });

  it('names the host in one line when the database cannot be reached, exit 1', async () => {
    const run = await cli(['retention'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${await portFrom(7370, 7380)}/nowhere` });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^queen-serverless: 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
