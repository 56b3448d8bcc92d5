import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';

// Bundles lib/codec for workerd the way a deployment would (browser conditions, zstd.wasm as a
// separate Wasm module handed to useZstdWasmModule) and runs it with `workerd test`.
const codecDir = fileURLToPath(new URL('../../lib/codec/', import.meta.url));
const require = createRequire(import.meta.url);
const wasmPath = join(dirname(require.resolve('@bokuweb/zstd-wasm')), '../web/zstd.wasm');
// The workerd package's main export is the path of the native binary.
const workerdPath = (require('workerd') as { default: string }).default;

const entry = `
import zstdWasm from './zstd.wasm';
import { useZstdWasmModule } from ${JSON.stringify(join(codecDir, 'zstd.ts'))};
import { encodeSegment, decodeSegment } from ${JSON.stringify(join(codecDir, 'segment.ts'))};
import { CorruptSegmentError } from ${JSON.stringify(join(codecDir, 'errors.ts'))};
import { uuidToBytes } from ${JSON.stringify(join(codecDir, 'frame.ts'))};
import { xxh3_128_hex } from ${JSON.stringify(join(codecDir, 'xxh3.ts'))};

useZstdWasmModule(zstdWasm);

function check(ok, what) { if (!ok) throw new Error('failed: ' + what); }

export default {
  async test() {
    const frames = Array.from({ length: 100 }, (_, i) => ({
      messageId: uuidToBytes(crypto.randomUUID()), traceId: null, transactionId: 'tx-' + i,
      producerSub: i % 2 ? 'sub' : null, encrypted: false,
      payload: new TextEncoder().encode(JSON.stringify({ i, pad: 'x'.repeat(800) })),
    }));
    const blob = await encodeSegment(frames, 3);
    const slice = decodeSegment(blob, 500, 510, 512, 100);
    check(slice.map((m) => m.offset + ':' + m.transactionId).join() === '510:tx-10,511:tx-11,512:tx-12', 'slice');
    check(xxh3_128_hex('tx-12345') === '410f08c9e4bce2345662f7895215a53f', 'xxh3');
    let corrupt = null;
    try { decodeSegment(blob.subarray(0, blob.length - 3), 500, 500, 599); } catch (e) { corrupt = e; }
    check(corrupt instanceof CorruptSegmentError, 'truncated blob throws CorruptSegmentError');
    console.log('codec-in-workerd ok');
  },
};
`;

const config = `
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (services = [(name = "codec", worker = .worker)]);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "./zstd.wasm", wasm = embed "zstd.wasm"),
  ],
  compatibilityDate = "2025-01-01",
);
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'queen-codec-workerd-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('runs encode, slice, corruption check and xxh3 inside workerd with an injected zstd module', async () => {
  await writeFile(join(dir, 'entry.js'), entry);
  await writeFile(join(dir, 'config.capnp'), config);
  await copyFile(wasmPath, join(dir, 'zstd.wasm'));
  await build({
    entryPoints: [join(dir, 'entry.js')],
    outfile: join(dir, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: ['./zstd.wasm'],
    logLevel: 'silent',
  });
  const { stdout, stderr } = await promisify(execFile)(workerdPath, ['test', 'config.capnp'], { cwd: dir });
  expect(stdout + stderr).toContain('codec-in-workerd ok');
  expect(stdout + stderr).toContain('[ PASS ]');
}, 60_000);
