// esbuild bundles: dist/lambda/<name>/index.mjs per function (Node 22, ESM, for Lambda) and the one
// Worker dist/workers/queen/worker.js (workerd, what wrangler.jsonc deploys), each with zstd.wasm.
//   npx tsx scripts/bundle.ts [lambda|workers]   # prints each bundle's size, raw and gzipped
import { copyFile, cp, readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const zstdDist = join(dirname(createRequire(import.meta.url).resolve('@bokuweb/zstd-wasm')), '..');

export const LAMBDA_FUNCTIONS = ['push', 'pop', 'ack', 'configure', 'dlq', 'retention', 'deliver', 'migrate'] as const;
export const WORKER_FUNCTIONS = ['queen'] as const;

export interface BundleInfo {
  target: 'lambda' | 'workers';
  name: string;
  dir: string;
  file: string;
  bytes: number;
}

// zstd-wasm's Node build reads zstd.wasm from __dirname with require(): give the ESM bundle both.
const NODE_BANNER = [
  "import { createRequire as __queenCreateRequire } from 'node:module';",
  "import { fileURLToPath as __queenFileURLToPath } from 'node:url';",
  "import { dirname as __queenDirname } from 'node:path';",
  'const require = __queenCreateRequire(import.meta.url);',
  'const __filename = __queenFileURLToPath(import.meta.url);',
  'const __dirname = __queenDirname(__filename);',
].join('\n');

export async function bundleLambda(name: string, outRoot = join(root, 'dist')): Promise<BundleInfo> {
  const dir = join(outRoot, 'lambda', name);
  await rm(dir, { recursive: true, force: true });
  const file = join(dir, 'index.mjs');
  await build({
    entryPoints: [join(root, 'functions/lambda', `${name}.ts`)],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    banner: { js: NODE_BANNER },
    external: ['pg-native'],
    logLevel: 'warning',
  });
  await copyFile(join(zstdDist, 'common/zstd.wasm'), join(dir, 'zstd.wasm'));
  if (name === 'migrate') await cp(join(root, 'drizzle'), join(dir, 'drizzle'), { recursive: true });
  return { target: 'lambda', name, dir, file, bytes: (await stat(file)).size };
}

export async function bundleWorker(name: string, outRoot = join(root, 'dist')): Promise<BundleInfo> {
  const dir = join(outRoot, 'workers', name);
  await rm(dir, { recursive: true, force: true });
  const file = join(dir, 'worker.js');
  await build({
    entryPoints: [join(root, 'functions/workers', `${name}.ts`)],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    minify: true,
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    alias: { pg: join(root, 'lib/http/runtime/pg-unavailable.ts') },
    // Only reached on Node (ws when there is no global WebSocket); workerd has the built-ins.
    external: ['ws', 'node:*', '@electric-sql/pglite'],
    // The zstd web build resolves its .wasm next to import.meta.url, undefined in a Worker bundle.
    define: { 'import.meta.url': '"file:///bundle/worker.js"' },
    plugins: [
      {
        name: 'wasm-module',
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, () => ({ path: './zstd.wasm', external: true }));
        },
      },
    ],
    logLevel: 'warning',
  });
  await copyFile(join(zstdDist, 'web/zstd.wasm'), join(dir, 'zstd.wasm'));
  return { target: 'workers', name, dir, file, bytes: (await stat(file)).size };
}

export async function bundleAll(outRoot?: string, targets: readonly BundleInfo['target'][] = ['lambda', 'workers']): Promise<BundleInfo[]> {
  const lambdas = targets.includes('lambda') ? await Promise.all(LAMBDA_FUNCTIONS.map((n) => bundleLambda(n, outRoot))) : [];
  const workers = targets.includes('workers') ? await Promise.all(WORKER_FUNCTIONS.map((n) => bundleWorker(n, outRoot))) : [];
  return [...lambdas, ...workers];
}

/** What a platform's size limit counts: the upload compressed (Workers: 3 MB free, 10 MB paid). */
export async function gzippedBytes(file: string): Promise<number> {
  return gzipSync(await readFile(file), { level: 9 }).length;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const targets = process.argv.slice(2).filter((a): a is BundleInfo['target'] => a === 'lambda' || a === 'workers');
  const kib = (n: number) => `${(n / 1024).toFixed(1).padStart(6)} KiB`;
  for (const b of await bundleAll(undefined, targets.length ? targets : undefined)) {
    const wasm = join(b.dir, 'zstd.wasm');
    const [js, wasmBytes, wasmGz] = [await gzippedBytes(b.file), (await stat(wasm)).size, await gzippedBytes(wasm)];
    console.log(
      `${b.target.padEnd(8)} ${b.name.padEnd(10)} ${kib(b.bytes)} (gzip ${kib(js)})  + zstd.wasm ${kib(wasmBytes)} (gzip ${kib(wasmGz)})  ${b.file.slice(root.length + 1)}`,
    );
  }
}
