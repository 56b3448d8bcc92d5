// Cloudflare Workers entry for the dlq route family; the cron trigger, if configured, runs retention.
import zstdWasm from '../../node_modules/@bokuweb/zstd-wasm/dist/web/zstd.wasm';
import { useZstdWasmModule } from '../../lib/codec/zstd.js';
import { createWorker } from '../../lib/http/runtime/workers.js';
import runScheduledRetention from '../retention.js';
import dlq from '../dlq.js';

useZstdWasmModule(zstdWasm);

export default createWorker([dlq], (db) => runScheduledRetention(db));
