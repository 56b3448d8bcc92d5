// The Cloudflare Worker: every route family and /health behind one workers.dev hostname; a push to
// a subscribed queue delivers under ctx.waitUntil, and the cron triggers' `scheduled` runs the
// jobs of lib/jobs.ts (retention, the delivery sweep). One Worker fits the limits many times over
// (174 KiB gzipped with zstd.wasm against 3 MB; docs/deploy-cloudflare.md), so there is nothing to route.
import zstdWasm from '../../node_modules/@bokuweb/zstd-wasm/dist/web/zstd.wasm';
import { useZstdWasmModule } from '../../lib/codec/zstd.js';
import { createWorker } from '../../lib/http/runtime/workers.js';
import { allFunctions } from '../index.js';
import { JOB_RUNS } from '../jobs.js';

useZstdWasmModule(zstdWasm);

export default createWorker(allFunctions, JOB_RUNS);
