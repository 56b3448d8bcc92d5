// What every route sees: the database, the configuration and who is calling.
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { BrokerContext } from '../broker/context.js';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { QueenError } from '../errors.js';

export type Role = 'read-only' | 'read-write' | 'admin';
const RANK: Record<Role, number> = { 'read-only': 0, 'read-write': 1, admin: 2 };

export interface Principal {
  tenant: string;
  /** The JWT subject, stored as the producer sub of pushed frames. */
  sub: string | null;
  role: Role;
}

/**
 * What the runtime does once a push has committed: start delivering to the subscriptions of the
 * queues written to (docs/delivery.md#dispatch), without holding the answer up for the deliveries.
 */
// `c` is the request's context, for a runtime whose trigger needs the request (workerd's waitUntil).
export type AfterPush = (db: Database, tenant: string, queues: readonly string[], c: Context<BrokerEnv>) => Promise<void>;

export interface BrokerEnv {
  Variables: { db: Database; config: Config; principal: Principal; afterPush: AfterPush };
}

/** What every broker verb is called with after the database: who calls, and the configuration. */
export function brokerContext(c: Context<BrokerEnv>): BrokerContext {
  const { tenant, sub } = c.get('principal');
  return { tenant, sub, config: c.get('config') };
}

/** Tells the runtime which queues a committed push wrote to (duplicates wrote nothing). */
export async function afterPush(c: Context<BrokerEnv>, results: readonly { status: string; queueName: string }[]): Promise<void> {
  const queues = [...new Set(results.filter((r) => r.status === 'queued').map((r) => r.queueName))];
  if (queues.length > 0) await c.get('afterPush')(c.get('db'), c.get('principal').tenant, queues, c);
}

export type RouteSetup = (app: Hono<BrokerEnv>) => void;

export interface QueenFunction {
  name: string;
  routes: RouteSetup;
}

export const defineFunction = (name: string, routes: RouteSetup): QueenFunction => ({ name, routes });

export const DEFAULT_TENANT = 'default';

/** Roles nest: admin ⊃ read-write ⊃ read-only. */
export function requireRole(role: Role): MiddlewareHandler<BrokerEnv> {
  return async (c, next) => {
    const have = c.get('principal').role;
    if (RANK[have] < RANK[role]) {
      throw new QueenError(403, 'forbidden', `This route needs the ${role} role; your token has ${have}.`);
    }
    await next();
  };
}
