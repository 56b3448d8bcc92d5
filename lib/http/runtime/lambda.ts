// AWS Lambda behind a function URL (payload 2.0, base64 bodies): hono's adapter does the event
// translation. hono marks `hono/aws-lambda` deprecated for `@hono/aws-lambda`, which the npm
// registry does not serve yet (404, checked 2026-12-01): move the import once it is published.
// The pool lives in module scope: one Lambda instance serves one request at a time and reuses its
// connection across warm invocations.
import { handle } from 'hono/aws-lambda';
import { runDelivery, type DispatchReport } from '../../broker/delivery/dispatch.js';
import { preparedStatements, readConfig, type Config, type Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import type { Job } from '../../jobs.js';
import type { QueenFunction } from '../context.js';
import { connectDeployed, schemaGuard } from './database.js';
import { buildDeployedApp } from './deployed.js';
import { deliverEventQueues, isDeliverEvent, lambdaDeliveryTrigger, TRIGGER_WINDOW_MS } from './delivery-trigger.js';

const log = (message: string, err?: unknown) => (err === undefined ? console.log(message) : console.error(message, err));

/** One database per instance, created on first use; the schema is checked once per cold start. */
export function instanceDatabase(env: Env): () => Promise<Database> {
  let pool: Promise<Database> | null = null;
  const guard = schemaGuard();
  return async () => {
    pool ??= connectDeployed(env.DATABASE_URL || undefined, { max: 2, preparedStatements: preparedStatements(env) }).catch(
      (err: unknown) => {
        pool = null;
        throw err;
      },
    );
    const db = await pool;
    await guard(db);
    return db;
  };
}

/** A function URL's handler; a push invokes the Deliver function when QUEEN_DELIVER_FUNCTION names it. */
export function createLambdaHandler(functions: QueenFunction[], env: Env = process.env) {
  return handle(buildDeployedApp(functions, env, instanceDatabase(env), () => lambdaDeliveryTrigger(env, log)));
}

export type LambdaJobRun<T> = (db: Database, config: Config, deadline: number, log: (line: string, err?: unknown) => void) => Promise<T>;

/** Lambda's context: the time left before the function's limit. */
interface LambdaContext {
  getRemainingTimeInMillis?: () => number;
}

// A run starts no work this close to the function's time limit.
const MARGIN_MS = 10_000;

/** The scheduled (EventBridge) handler of a job of lib/jobs.ts: one run (which logs its own report) on the database. */
export function createJobHandler<T>(job: Job, run: LambdaJobRun<T>, env: Env = process.env) {
  const database = instanceDatabase(env);
  return async (_event?: unknown, context?: LambdaContext): Promise<T> => {
    const left = context?.getRemainingTimeInMillis?.() ?? job.timeoutSeconds * 1000;
    return run(await database(), readConfig(env, { auth: 'jwt' }), Date.now() + Math.max(0, left - MARGIN_MS), log);
  };
}

/** The Deliver function: a push's asynchronous invocation delivers to its queues' subscriptions; the schedule's event sweeps. */
export function createDeliverHandler<T>(job: Job, sweep: LambdaJobRun<T>, env: Env = process.env) {
  const database = instanceDatabase(env);
  const scheduled = createJobHandler(job, sweep, env);
  return async (event?: unknown, context?: LambdaContext) => {
    if (!isDeliverEvent(event)) return scheduled(event, context);
    const deadline = Date.now() + TRIGGER_WINDOW_MS;
    const db = await database();
    const queueIds = await deliverEventQueues(db, event);
    if (queueIds.length === 0) return { batches: 0, delivered: 0, failed: 0, deadLettered: 0 } satisfies DispatchReport;
    return runDelivery(db, readConfig(env, { auth: 'jwt' }), { deadline, queueIds, log });
  };
}
