import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

// The workerd path: a precompiled WebAssembly.Module handed to the web build. Each test loads a
// fresh copy of lib/codec so the memoised load and the Emscripten module start clean.
const packageDir = dirname(createRequire(import.meta.url).resolve('@bokuweb/zstd-wasm'));
const wasmPath = join(packageDir, '../web/zstd.wasm');

async function loadCodec() {
  const zstd = await import('../../lib/codec/zstd.js');
  const segment = await import('../../lib/codec/segment.js');
  return { ...zstd, ...segment };
}

const frame = {
  messageId: new Uint8Array(16).fill(1),
  traceId: null,
  transactionId: 'tx-1',
  producerSub: null,
  encrypted: false,
  payload: new TextEncoder().encode('{"hello":"workerd"}'.repeat(50)),
};

beforeEach(() => {
  vi.resetModules();
});

describe('useZstdWasmModule', () => {
  it('compresses and decompresses through an injected precompiled module', async () => {
    const codec = await loadCodec();
    codec.useZstdWasmModule(await WebAssembly.compile(await readFile(wasmPath)));
    const blob = await codec.encodeSegment([frame, frame]);
    const viaWasm = codec.decompressSegment(blob, 'zstd-wasm');
    expect(viaWasm).toEqual(codec.decompressSegment(blob, 'fzstd'));
    expect(codec.decodeSegment(blob, 10, 11, 11, 2)[0]!.transactionId).toBe('tx-1');
  });

  it('refuses a module injected after zstd has started loading', async () => {
    const codec = await loadCodec();
    const mod = await WebAssembly.compile(await readFile(wasmPath));
    codec.useZstdWasmModule(mod);
    const ready = codec.ensureZstd();
    expect(() => codec.useZstdWasmModule(mod)).toThrow(/before the first ensureZstd/);
    await ready;
    expect(codec.ensureZstd()).toBe(ready);
  });

  it('rejects instead of waiting forever when the injected module is not zstd', async () => {
    const codec = await loadCodec();
    const empty = new WebAssembly.Module(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0));
    codec.useZstdWasmModule(empty);
    const first = codec.ensureZstd();
    await expect(first).rejects.toThrow(/zstd-wasm failed to load/);
    expect(codec.ensureZstd()).toBe(first);
  });
});

describe('decodeSegment before ensureZstd', () => {
  it('decodes with fzstd when zstd-wasm has not been loaded in this isolate', async () => {
    const writer = await loadCodec();
    const blob = await writer.encodeSegment([frame]);
    vi.resetModules();
    const reader = await loadCodec();
    expect(reader.getZstd()).toBeNull();
    expect(reader.decodeSegment(blob, 0, 0, 0, 1)[0]!.payload).toEqual(frame.payload);
    expect(() => reader.decompressSegment(blob, 'zstd-wasm')).toThrow(/call ensureZstd/);
  });
});
