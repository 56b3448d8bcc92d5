// AWS Lambda behind a function URL (payload 2.0, base64 bodies): hono's adapter does the event
// translation. hono marks `hono/aws-lambda` deprecated for `@hono/aws-lambda`, which the npm
// registry does not serve yet (404, checked 2026-12-01): move the import once it is published.
// The pool lives in module scope: one Lambda instance serves one request at a time and reuses its
// connection across warm invocations.
import { handle } from 'hono/aws-lambda';
import { preparedStatements, type Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import type { QueenFunction } from '../context.js';
import { connectDeployed, schemaGuard } from './database.js';
import { buildDeployedApp } from './deployed.js';

/** One database per instance, created on first use; the schema is checked once per cold start. */
export function instanceDatabase(env: Env): () => Promise<Database> {
  let pool: Promise<Database> | null = null;
  const guard = schemaGuard();
  return async () => {
    pool ??= connectDeployed(env.DATABASE_URL || undefined, { max: 2, preparedStatements: preparedStatements(env) }).catch((err: unknown) => {
      pool = null;
      throw err;
    });
    const db = await pool;
    await guard(db);
    return db;
  };
}

export function createLambdaHandler(functions: QueenFunction[], env: Env = process.env) {
  return handle(buildDeployedApp(functions, env, instanceDatabase(env)));
}

/** The scheduled (EventBridge) handler: runs one job (which logs its own report) on the database. */
export function createCronHandler<T>(job: (db: Database) => Promise<T>, env: Env = process.env) {
  const database = instanceDatabase(env);
  return async (): Promise<T> => job(await database());
}
