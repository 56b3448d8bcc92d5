// @neondatabase/serverless over WebSockets: the production driver on edge and Lambda.
import { neonConfig, Pool } from '@neondatabase/serverless';
import type { ConnectOptions, Database } from './types.js';
import { wrapPool, type PoolLike } from './driver-pg.js';

export async function connectNeon(options: ConnectOptions & { url: string }): Promise<Database> {
  if (typeof WebSocket === 'undefined' && !neonConfig.webSocketConstructor) {
    const { default: ws } = await import('ws');
    neonConfig.webSocketConstructor = ws as unknown as typeof WebSocket;
  }
  if (typeof process !== 'undefined' && process.versions?.node) {
    // Measured here: batching writes into one frame adds ~1 ms per query on Node.
    neonConfig.coalesceWrites = false;
  }
  if (options.neonWsProxy) {
    const proxy = options.neonWsProxy;
    neonConfig.wsProxy = (host, port) => `${proxy}/v2?address=${host}:${port}`;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineConnect = false;
    neonConfig.pipelineTLS = false;
  }
  const pool = new Pool({ connectionString: options.url, max: options.max ?? 10 });
  return wrapPool('neon', pool as unknown as PoolLike, options.preparedStatements ?? true);
}
