// Cloudflare Workers (workerd): `export default { fetch, scheduled }`. workerd forbids I/O on an
// object created by another request, so each request opens its own Neon pool and ends it after
// the response through ctx.waitUntil (measured: a module-scope pool breaks on the second request).
import { preparedStatements, type Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import type { QueenFunction } from '../context.js';
import { connectDeployed, schemaGuard } from './database.js';
import { buildDeployedApp } from './deployed.js';

export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Bindings: the variables of docs/api.md#environment-variables, plus NEON_WS_PROXY (`host:port`)
 * to reach a plain PostgreSQL.
 */
export type WorkerEnv = Env;

export interface Worker {
  fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response>;
  scheduled(event: unknown, env: WorkerEnv, ctx: WorkerContext): Promise<void>;
}

export function createWorker(functions: QueenFunction[], cron?: (db: Database) => Promise<unknown>): Worker {
  const guard = schemaGuard();
  const requestDatabase = (env: WorkerEnv, ctx: WorkerContext) => {
    let pool: Promise<Database> | undefined;
    const open = async () => {
      pool ??= connectDeployed(env.DATABASE_URL || undefined, { driver: 'neon', neonWsProxy: env.NEON_WS_PROXY, max: 2, preparedStatements: preparedStatements(env) });
      const db = await pool;
      await guard(db);
      return db;
    };
    const release = () => {
      if (pool) ctx.waitUntil(pool.then((db) => db.close()).catch(() => {}));
    };
    return { open, release };
  };

  return {
    async fetch(request, env, ctx) {
      const db = requestDatabase(env, ctx);
      try {
        return await buildDeployedApp(functions, env, db.open).fetch(request);
      } finally {
        db.release();
      }
    },
    async scheduled(_event, env, ctx) {
      if (!cron) return;
      const db = requestDatabase(env, ctx);
      try {
        await cron(await db.open());
      } finally {
        db.release();
      }
    },
  };
}
