// Cloudflare Workers (workerd): `export default { fetch, scheduled }`. workerd forbids I/O on an
// object created by another request, so each request opens its own Neon pool and ends it after
// the response through ctx.waitUntil (measured: a module-scope pool breaks on the second request).
// A push to a subscribed queue delivers under ctx.waitUntil; `scheduled` runs the jobs of
// lib/jobs.ts whose schedule is the cron trigger that fired.
import type { Context, Hono } from 'hono';
import { preparedStatements, readConfig, type Config, type Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import { jobsForCron, type JobName } from '../../jobs.js';
import type { BrokerEnv, QueenFunction } from '../context.js';
import { connectDeployed, schemaGuard } from './database.js';
import { buildDeployedApp } from './deployed.js';
import { workerDeliveryTrigger, type WorkerRequestScope } from './delivery-trigger.js';

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

// What one request hands the app it shares with the isolate's other requests, as hono's `c.env`.
interface RequestScope {
  /** The request's own pool, opened on first use and ended after the answer. */
  database(): Promise<Database>;
  delivery: WorkerRequestScope;
}
const scopeOf = (c: Context<BrokerEnv>) => c.env as RequestScope;

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

  // One app per bindings object (an isolate's requests share it), not one per request: building
  // it, its routes and its router's first match cost more CPU than the rest of a push
  // (bench/adapters.ts). Nothing in it belongs to a request: the request's pool and waitUntil
  // reach it through c.env.
  const apps = new WeakMap<WorkerEnv, Hono<BrokerEnv>>();
  const appFor = (env: WorkerEnv) => {
    let app = apps.get(env);
    if (!app) {
      app = buildDeployedApp(
        functions,
        env,
        (c) => scopeOf(c).database(),
        (config) => workerDeliveryTrigger(config, (c) => scopeOf(c).delivery, log),
      );
      apps.set(env, app);
    }
    return app;
  };

  return {
    async fetch(request, env, ctx) {
      const db = requestDatabase(env, ctx);
      const scope: RequestScope = {
        database: db.open,
        delivery: {
          waitUntil: (p) => ctx.waitUntil(p),
          // The delivery outlives this request's pool: it opens one of its own.
          open: () => requestDatabase(env, { waitUntil: () => {} }).open(),
        },
      };
      try {
        return await appFor(env).fetch(request, scope);
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
