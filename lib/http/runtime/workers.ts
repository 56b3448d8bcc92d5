// Cloudflare Workers (workerd): `export default { fetch, scheduled }`. workerd forbids I/O on an
// object created by another request, so each request opens its own Neon pool and ends it after
// the response through ctx.waitUntil (measured: a module-scope pool breaks on the second request).
// A push to a subscribed queue delivers under ctx.waitUntil; `scheduled` runs the jobs of
// lib/jobs.ts whose schedule is the cron trigger that fired.
import { preparedStatements, readConfig, type Config, type Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import { jobsForCron, type JobName } from '../../jobs.js';
import type { QueenFunction } from '../context.js';
import { connectDeployed, schemaGuard } from './database.js';
import { buildDeployedApp } from './deployed.js';
import { workerDeliveryTrigger } from './delivery-trigger.js';

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
  scheduled(event: { cron?: string }, env: WorkerEnv, ctx: WorkerContext): Promise<void>;
}

export type WorkerJobRun = (db: Database, config: Config, deadline: number, log: (line: string, err?: unknown) => void) => Promise<unknown>;

// Well inside what Cloudflare gives a cron run or a waitUntil after the answer (30 s).
const WORKER_RUN_MS = 25_000;
const log = (message: string, err?: unknown) => (err === undefined ? console.log(message) : console.error(message, err));

export function createWorker(functions: QueenFunction[], jobs?: Record<JobName, WorkerJobRun>): Worker {
  const guard = schemaGuard();
  const requestDatabase = (env: WorkerEnv, ctx: WorkerContext) => {
    let pool: Promise<Database> | undefined;
    const open = async () => {
      pool ??= connectDeployed(env.DATABASE_URL || undefined, {
        driver: 'neon',
        neonWsProxy: env.NEON_WS_PROXY,
        max: 2,
        preparedStatements: preparedStatements(env),
      });
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
      // The delivery outlives this request's pool: it opens one of its own.
      const ownPool = async () => {
        const own = requestDatabase(env, { waitUntil: () => {} });
        return own.open();
      };
      try {
        return await buildDeployedApp(functions, env, db.open, (config) =>
          workerDeliveryTrigger(config, (p) => ctx.waitUntil(p), ownPool, log),
        ).fetch(request);
      } finally {
        db.release();
      }
    },
    async scheduled(event, env, ctx) {
      if (!jobs) return;
      const due = jobsForCron(event.cron ?? '', env);
      if (due.length === 0) {
        log(`no job runs on the cron trigger "${event.cron}": see the schedules in docs/operations.md#scheduled-jobs`);
        return;
      }
      const config = readConfig(env, { auth: 'jwt' });
      const db = requestDatabase(env, ctx);
      try {
        const open = await db.open();
        const deadline = Date.now() + WORKER_RUN_MS;
        for (const job of due) await jobs[job.name](open, config, deadline, log);
      } finally {
        db.release();
      }
    },
  };
}
