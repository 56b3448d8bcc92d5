// zstd through @bokuweb/zstd-wasm, loaded once per isolate.
//
// On Node the package's own init() reads zstd.wasm beside its file. Runtimes that forbid
// compiling WASM from bytes (workerd, Vercel Edge) must hand over a precompiled module first:
//
//   import zstdWasm from '<path>/node_modules/@bokuweb/zstd-wasm/dist/web/zstd.wasm';
//   useZstdWasmModule(zstdWasm);   // before the first ensureZstd()
//
// The module is instantiated with `new WebAssembly.Instance` inside the Emscripten
// `instantiateWasm` hook of the package's web build. We call the web build's `Module.init()`
// ourselves rather than its exported init(), which resolves `import.meta.url` first and so
// fails in a bundle where that is undefined. The web build is not in the package's `exports`
// map and uses extensionless ESM imports: only a bundler (esbuild, Vite) can load it.

interface ZstdBinding {
  compress(buf: Uint8Array, level?: number): Uint8Array;
  decompress(buf: Uint8Array, opts?: { defaultHeapSize?: number }): Uint8Array;
}

interface EmscriptenModule {
  instantiateWasm?: (
    imports: WebAssembly.Imports,
    receiveInstance: (instance: WebAssembly.Instance) => unknown,
  ) => WebAssembly.Exports | false;
  init(pathOrBytes?: unknown): unknown;
}

let injectedModule: WebAssembly.Module | null = null;
let loading: Promise<void> | null = null;
let binding: ZstdBinding | null = null;

/** Makes ensureZstd() instantiate this precompiled zstd.wasm instead of reading the file. */
export function useZstdWasmModule(mod: WebAssembly.Module): void {
  if (loading !== null) {
    throw new Error('useZstdWasmModule() must run before the first ensureZstd(); call it at module load');
  }
  injectedModule = mod;
}

/** Loads zstd-wasm once; later calls return the same promise. */
export function ensureZstd(): Promise<void> {
  const injected = injectedModule;
  loading ??= (injected !== null ? loadWebBuild(injected) : loadPackage()).then(
    (loaded) => {
      binding = loaded;
    },
    (cause: unknown) => {
      // Only the Node path fails before touching Emscripten state (reading the file) and so may
      // retry; a second init() of the web build would wait forever on its stuck run dependency.
      if (injected === null) loading = null;
      throw new Error('zstd-wasm failed to load', { cause });
    },
  );
  return loading;
}

/** The loaded binding, or null before ensureZstd() has resolved. */
export function getZstd(): ZstdBinding | null {
  return binding;
}

async function loadPackage(): Promise<ZstdBinding> {
  const zstd = await import('@bokuweb/zstd-wasm');
  await zstd.init();
  return zstd;
}

async function loadWebBuild(mod: WebAssembly.Module): Promise<ZstdBinding> {
  const [glue, zstd] = await Promise.all([
    import('../../node_modules/@bokuweb/zstd-wasm/dist/web/module.js'),
    import('../../node_modules/@bokuweb/zstd-wasm/dist/web/index.web.js'),
  ]);
  const emscripten = glue.Module as EmscriptenModule;
  // Emscripten swallows a throw from this hook and then never signals readiness, so we keep
  // the error and rethrow it instead of waiting forever.
  let failure: unknown = null;
  emscripten.instantiateWasm = (imports, receiveInstance) => {
    try {
      const instance = new WebAssembly.Instance(mod, imports);
      receiveInstance(instance);
      return instance.exports;
    } catch (error) {
      failure = error;
      return false;
    }
  };
  emscripten.init();
  if (failure !== null) throw failure;
  await glue.waitInitialized();
  return zstd;
}
