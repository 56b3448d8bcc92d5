// AWS Lambda entry for the dlq route family (function URL, payload 2.0).
import { ensureZstd } from '../../lib/codec/zstd.js';
import { createLambdaHandler } from '../../lib/http/runtime/lambda.js';
import dlq from '../dlq.js';

// Compiling zstd's WASM during Lambda's init phase (full CPU, before the first request) instead of
// inside the first request that needs it.
void ensureZstd().catch(() => {});

export const handler = createLambdaHandler([dlq]);
