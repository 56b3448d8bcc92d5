// Cloudflare Workers entry for the pop route family; the cron trigger, if configured, runs retention.
import zstdWasm from '../../node_modules/@bokuweb/zstd-wasm/dist/web/zstd.wasm';
import { useZstdWasmModule } from '../../lib/codec/zstd.js';
import { createWorker } from '../../lib/http/runtime/workers.js';
import runScheduledRetention from '../retention.js';
import pop from '../pop.js';

useZstdWasmModule(zstdWasm);

export default createWorker([pop], (db) => runScheduledRetention(db));
