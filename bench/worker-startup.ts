// The Cloudflare Worker against Workers' limits: its upload size (raw and gzipped, as the 3 MB free
// / 10 MB paid limits count it) and its startup in workerd (spawn → first response, wall and CPU),
// beside a one-line Worker in the same workerd as the baseline. No database: the request is a 404.
//   npx tsx bench/worker-startup.ts
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorker, gzippedBytes } from '../scripts/bundle.js';
import { readWranglerConfig, workerdConfigText, workerFromWrangler, type WorkerSpec } from '../scripts/workerd-config.js';

const RUNS = 7;
const PORT = 7330;
const root = fileURLToPath(new URL('..', import.meta.url));
const WORKERD = join(root, 'node_modules/@cloudflare/workerd-linux-64/bin/workerd');
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** Spawns workerd on `config`, returns ms until the first answer and the CPU ms workerd used until then. */
async function startOnce(dir: string, config: string): Promise<{ wall: number; cpu: number }> {
  await writeFile(join(dir, 'config.capnp'), config);
  const started = performance.now();
  const child = spawn(WORKERD, ['serve', 'config.capnp'], { cwd: dir, stdio: 'ignore' });
  try {
    for (;;) {
      try {
        await fetch(`http://127.0.0.1:${PORT}/nope`);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 2));
      }
      if (performance.now() - started > 30_000) throw new Error('workerd did not answer within 30 s');
    }
    const wall = performance.now() - started;
    const fields = (await readFile(`/proc/${child.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
    return { wall, cpu: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = await mkdtemp(join(tmpdir(), 'queen-worker-startup-'));
try {
  const bundle = await bundleWorker('queen', dir);
  const wrangler = await readWranglerConfig(join(root, 'wrangler.jsonc'));
  const secrets = Object.fromEntries((wrangler.secrets?.required ?? []).map((s) => [s, 'unused']));
  const queen = await workerFromWrangler(wrangler, bundle.dir, secrets);
  await writeFile(join(dir, 'hello.js'), 'export default { fetch: () => new Response("hello") };');
  const hello: WorkerSpec = {
    name: 'hello',
    modules: [{ name: 'hello.js', kind: 'esModule', path: join(dir, 'hello.js') }],
    compatibilityDate: wrangler.compatibility_date,
    bindings: [],
  };

  const wasm = join(bundle.dir, 'zstd.wasm');
  const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
  const gz = (await gzippedBytes(bundle.file)) + (await gzippedBytes(wasm));
  const raw = bundle.bytes + (await readFile(wasm)).length;
  console.log(
    `Worker upload: ${kib(raw)} raw, ${kib(gz)} gzipped (worker.js + zstd.wasm); limits 3 MB free, 10 MB paid: ${((gz / 3e6) * 100).toFixed(1)}% of the free limit`,
  );
  console.log(`workerd startup, spawn → first response, median of ${RUNS} (CPU in ${TICK_MS} ms ticks)`);
  for (const worker of [hello, queen]) {
    const config = workerdConfigText({ dir, workers: [worker], sockets: [{ service: worker.name, port: PORT }] });
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await startOnce(dir, config));
    console.log(
      `  ${worker.name.padEnd(6)} wall ${median(runs.map((r) => r.wall))
        .toFixed(0)
        .padStart(4)} ms   workerd CPU ${median(runs.map((r) => r.cpu))
        .toFixed(0)
        .padStart(4)} ms`,
    );
  }
  console.log('Workers allow 1 s of startup (parsing and running the global scope); the difference between the two lines is ours.');
} finally {
  await rm(dir, { recursive: true, force: true });
}
