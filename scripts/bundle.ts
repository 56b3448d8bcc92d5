// esbuild bundles per function: dist/lambda/<name>/index.mjs (Node 22, ESM, for Lambda) and
// dist/workers/<name>/worker.js (workerd), each with zstd.wasm beside it.
//   npx tsx scripts/bundle.ts            # prints each bundle's size
import { copyFile, cp, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const zstdDist = join(dirname(createRequire(import.meta.url).resolve('@bokuweb/zstd-wasm')), '..');

export const LAMBDA_FUNCTIONS = ['push', 'pop', 'ack', 'configure', 'dlq', 'retention', 'migrate'] as const;
export const WORKER_FUNCTIONS = ['push', 'pop', 'ack', 'configure', 'dlq'] as const;

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

export async function bundleAll(outRoot?: string): Promise<BundleInfo[]> {
  const lambdas = await Promise.all(LAMBDA_FUNCTIONS.map((n) => bundleLambda(n, outRoot)));
  const workers = await Promise.all(WORKER_FUNCTIONS.map((n) => bundleWorker(n, outRoot)));
  return [...lambdas, ...workers];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wasm = (await stat(join(zstdDist, 'common/zstd.wasm'))).size;
  for (const b of await bundleAll()) {
    console.log(`${b.target.padEnd(8)} ${b.name.padEnd(10)} ${(b.bytes / 1024).toFixed(1).padStart(7)} KiB  (+ zstd.wasm ${(wasm / 1024).toFixed(0)} KiB)  ${b.file.slice(root.length + 1)}`);
  }
}
