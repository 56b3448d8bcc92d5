// Cloudflare Workers entry for the push route family; the cron trigger, if configured, runs retention.
import zstdWasm from '../../node_modules/@bokuweb/zstd-wasm/dist/web/zstd.wasm';
import { useZstdWasmModule } from '../../lib/codec/zstd.js';
import { createWorker } from '../../lib/http/runtime/workers.js';
import runScheduledRetention from '../retention.js';
import push from '../push.js';

useZstdWasmModule(zstdWasm);

export default createWorker([push], (db) => runScheduledRetention(db));
