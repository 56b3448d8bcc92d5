// What every deployed function shares: auth on unless QUEEN_AUTH=none, configuration from the
// environment (process.env on Lambda, bindings on workerd).
import type { Context, Hono } from 'hono';
import { readConfig, type Config, type Env } from '../../config.js';
import type { Database } from '../../db/types.js';
import { buildApp } from '../app.js';
import { authenticate } from '../auth.js';
import type { AfterPush, BrokerEnv, QueenFunction } from '../context.js';

export function buildDeployedApp(
  functions: QueenFunction[],
  env: Env,
  database: (c: Context<BrokerEnv>) => Promise<Database>,
  afterPush?: (config: Config) => AfterPush,
): Hono<BrokerEnv> {
  const config = readConfig(env, { auth: 'jwt' });
  return buildApp(functions, {
    config,
    database,
    authenticate: config.auth === 'jwt' ? authenticate : undefined,
    afterPush: afterPush?.(config),
  });
}
