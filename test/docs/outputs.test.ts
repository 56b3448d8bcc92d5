// Every command output docs/ quotes is checked against the command, the way the README's tour is
// (test/docs/readme.test.ts): here those that run in-process, and a list of every quote in docs/
// with the test that checks it, so a new quote without a check fails.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { root } from '../support/server.js';
import { expectPrinted, quotedAfter } from './quoted.js';

const run = promisify(execFile);
const doc = (name: string) => readFile(join(root, 'docs', name), 'utf8');

// file → the first line of each quote (a `# →` line, or a ```text block's first line) → where it is checked.
const QUOTES: Record<string, Record<string, string>> = {
  'operations.md': {
    '# → eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYWRtaW4iLCJ0ZW5hbnQiOiJhY21lIiwiaWF0Ijo…': 'this file',
    'smoke test of http://localhost:6632 (auth: admin token minted from JWT_SECRET)': 'test/cli/cli.test.ts (smoke)',
    'queen listening on http://localhost:6632 (database: PGlite in …/.queen; … migration(s) applied)': 'test/docs/readme.test.ts (banner)',
    'retention: {…"segmentsDeleted":1,"messagesDeleted":2,…"queues":[{"tenant":"default","queue":"logs",…}]…}':
      'test/cli/cli.test.ts (retention)',
    'schema is current: migration 00…': 'test/cli/cli.test.ts (migrate)',
    '# → # HELP queen_build_info Always 1; the version label says which queen-serverless answers.': 'this file',
    '# → {"maintenanceMode":true,"bufferedMessages":0,"bufferHealthy":true,"message":"Maintenance mode ENABLED for this tenant: pops answer 204, pushes still commit."}':
      'this file',
  },
  'deploy-cloudflare.md': {
    '# → migrated ep-cool-darkness-123456.eu-central-1.aws.neon.tech: … migration(s) applied, schema at 00…':
      'test/cli/cli.test.ts (migrate)',
    '# → schema is current: migration 00…': 'test/cli/cli.test.ts (migrate)',
  },
  'clients.md': { 'pushed: queued, queued, queued': 'test/docs/readme.test.ts (plain-fetch example)' },
  // Not output: layouts and the import arrows (test/layout/arrows.test.ts).
  'architecture.md': {
    "functions/  ->  lib/http, lib/broker (lib/codec to start zstd, lib/db/types.ts for a job's database)": 'not output',
  },
  'storage.md': {
    'queue "orders", partition "eu"                 log_partitions: last_offset 11, log_start 4': 'not output',
    'u32  body_len': 'not output',
  },
};

function quotesIn(text: string): string[] {
  const arrows = text.split('\n').filter((l) => l.startsWith('# → '));
  const blocks = [...text.matchAll(/^```text\n(.*)$/gm)].map((m) => m[1]!);
  return [...arrows, ...blocks];
}

describe('quoted command output in docs/', () => {
  it('is each listed with the test that checks it', async () => {
    const files = (await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).sort();
    const found = Object.fromEntries(
      await Promise.all(files.map(async (f) => [f, quotesIn(await doc(f)).sort()] as const)).then((all) =>
        all.filter(([, q]) => q.length > 0),
      ),
    );
    const listed = Object.entries(QUOTES).map(([f, q]): [string, string[]] => [f, Object.keys(q).sort()]);
    expect(found).toEqual(Object.fromEntries(listed));
  });

  it('token: what operations.md shows the CLI printing', async () => {
    const ops = await doc('operations.md');
    const command = 'npx queen-serverless token --role admin --tenant acme --sub me --expires 1h';
    const { stdout } = await run(process.execPath, [join(root, 'bin/queen-serverless.js'), ...command.split(' ').slice(2)], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', JWT_SECRET: 'a'.repeat(44) },
    });
    expectPrinted(quotedAfter(ops, command), stdout, 'token');
  });

  describe('against the API', () => {
    const db = useDatabase();

    it('metrics and maintenance: what operations.md shows curl printing', async () => {
      const ops = await doc('operations.md');
      const api = testClient(db);
      const metrics = await api.call('GET', '/metrics/prometheus');
      expectPrinted(
        quotedAfter(ops, 'curl -s -H "Authorization: Bearer $(cat /etc/prometheus/queen.jwt)" "$BASE/metrics/prometheus" | head -3'),
        metrics.text.split('\n').slice(0, 3).join('\n'),
        'metrics',
      );
      const on = await api.call('POST', '/api/v1/system/maintenance', { enabled: true });
      expectPrinted(quotedAfter(ops, `  -H 'content-type: application/json' -d '{"enabled":true}'`), on.text, 'maintenance');
      await api.call('POST', '/api/v1/system/maintenance', { enabled: false });
    });
  });
});
