// The esbuild bundles as shipped: small, free of the embedded database, and runnable on plain Node
// with nothing but the bundle directory (zstd.wasm beside it, no node_modules).
import { execFile } from 'node:child_process';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleLambda, LAMBDA_FUNCTIONS, type BundleInfo } from '../../scripts/bundle.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { functionUrlEvent, JWT_SECRET, token } from '../../support/lambda.js';

let dir: string;
let bundles: BundleInfo[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'queen-bundle-'));
  bundles = await Promise.all(LAMBDA_FUNCTIONS.map((name) => bundleLambda(name, dir)));
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('Lambda bundles', () => {
  it('stay under 1 MB each and leave PGlite out', async () => {
    for (const b of bundles) {
      expect(b.bytes, b.name).toBeLessThan(1024 * 1024);
      expect(await readFile(b.file, 'utf8'), b.name).not.toMatch(/@electric-sql\/pglite|pglite\.wasm/);
    }
  });

  describe.skipIf(testMode() !== 'pg')('on the real PostgreSQL', () => {
    const db = useDatabase();

    it('pushes from the push bundle run by plain Node outside the repository', async () => {
      const push = bundles.find((b) => b.name === 'push')!;
      const event = functionUrlEvent('POST', '/api/v1/push', {
        base64: true,
        headers: { authorization: `Bearer ${await token({ role: 'read-write' })}` },
        body: { items: [{ queue: 'bundled', payload: { zstd: 'x'.repeat(2000) } }] },
      });
      const script = join(dir, 'invoke.mjs');
      await writeFile(
        script,
        `const { handler } = await import(${JSON.stringify(pathToFileURL(push.file).href)});\n` +
          `process.stdout.write(JSON.stringify(await handler(${JSON.stringify(event)}, {})));\nprocess.exit(0);\n`,
      );
      const { stdout } = await promisify(execFile)(process.execPath, [script], {
        cwd: push.dir,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: db().url!, JWT_SECRET },
      });
      const result = JSON.parse(stdout) as { statusCode: number; body: string };
      expect(result.statusCode, result.body).toBe(201);
      expect(JSON.parse(result.body)).toMatchObject([{ status: 'queued', queueName: 'bundled', offset: 0 }]);
      const [segment] = await db().query<{ blob: Uint8Array }>('SELECT blob FROM queen.log_segments');
      expect(segment!.blob.length).toBeLessThan(2000);
    });
  });
});
