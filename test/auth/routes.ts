// Every HTTP route of docs/api.md#routes with the least role it needs, for the role and fail-closed
// matrices.
import type { Role } from '../../lib/http/context.js';

export interface RouteCase {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The pattern as a route family registers it with Hono. */
  pattern: string;
  path: string;
  body?: unknown;
  role: Role;
  /**
   * What a caller with the role gets when the route has nothing behind it: 501
   * (docs/semantics.md#queens-other-routes).
   */
  answers?: 501;
}

const TXN = 'role-matrix-txn';
const LEASE = '01937f3e-0000-7000-8000-000000000000';
const SUB = '01937f3e-0000-7000-8000-00000000005b';

export const ROUTES: RouteCase[] = [
  {
    method: 'POST',
    pattern: '/api/v1/push',
    path: '/api/v1/push',
    body: { items: [{ queue: 'rm', payload: { n: 1 } }] },
    role: 'read-write',
  },
  { method: 'GET', pattern: '/api/v1/pop/queue/:queue', path: '/api/v1/pop/queue/rm', role: 'read-write' },
  {
    method: 'GET',
    pattern: '/api/v1/pop/queue/:queue/partition/:partition',
    path: '/api/v1/pop/queue/rm/partition/Default',
    role: 'read-write',
  },
  { method: 'GET', pattern: '/api/v1/pop', path: '/api/v1/pop?namespace=rm', role: 'read-write' },
  {
    method: 'POST',
    pattern: '/api/v1/ack',
    path: '/api/v1/ack',
    body: { transactionId: TXN, partitionId: '1', leaseId: LEASE, status: 'completed' },
    role: 'read-write',
  },
  {
    method: 'POST',
    pattern: '/api/v1/ack/batch',
    path: '/api/v1/ack/batch',
    body: { acknowledgments: [{ transactionId: TXN, partitionId: '1', leaseId: LEASE, status: 'completed' }] },
    role: 'read-write',
  },
  {
    method: 'POST',
    pattern: '/api/v1/lease/:leaseId/extend',
    path: `/api/v1/lease/${LEASE}/extend`,
    body: { seconds: 30 },
    role: 'read-write',
  },
  {
    method: 'POST',
    pattern: '/api/v1/transaction',
    path: '/api/v1/transaction',
    body: { operations: [{ type: 'push', items: [{ queue: 'rm', payload: 1 }] }] },
    role: 'read-write',
  },
  {
    method: 'POST',
    pattern: '/api/v1/configure',
    path: '/api/v1/configure',
    body: { queue: 'rm', options: { leaseTime: 30 } },
    role: 'admin',
  },
  { method: 'GET', pattern: '/api/v1/resources/queues', path: '/api/v1/resources/queues', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/resources/overview', path: '/api/v1/resources/overview', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/resources/queues/:queue', path: '/api/v1/resources/queues/rm', role: 'read-only' },
  { method: 'DELETE', pattern: '/api/v1/resources/queues/:queue', path: '/api/v1/resources/queues/rm-missing', role: 'admin' },
  { method: 'GET', pattern: '/api/v1/resources/namespaces', path: '/api/v1/resources/namespaces', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/resources/tasks', path: '/api/v1/resources/tasks', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/consumer-groups', path: '/api/v1/consumer-groups', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/consumer-groups/lagging', path: '/api/v1/consumer-groups/lagging?minLagSeconds=0', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/consumer-groups/:group', path: '/api/v1/consumer-groups/g', role: 'read-only' },
  {
    method: 'POST',
    pattern: '/api/v1/consumer-groups/:group/subscription',
    path: '/api/v1/consumer-groups/g/subscription',
    body: { subscriptionTimestamp: '2026-01-01T00:00:00Z' },
    role: 'read-write',
  },
  {
    method: 'POST',
    pattern: '/api/v1/consumer-groups/:group/queues/:queue/seek',
    path: '/api/v1/consumer-groups/g/queues/rm/seek',
    body: { toEnd: true },
    role: 'admin',
  },
  {
    method: 'POST',
    pattern: '/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek',
    path: '/api/v1/consumer-groups/g/queues/rm/partitions/Default/seek',
    role: 'admin',
  },
  { method: 'DELETE', pattern: '/api/v1/consumer-groups/:group', path: '/api/v1/consumer-groups/g-missing', role: 'admin' },
  {
    method: 'DELETE',
    pattern: '/api/v1/consumer-groups/:group/queues/:queue',
    path: '/api/v1/consumer-groups/g-missing/queues/rm',
    role: 'admin',
  },
  { method: 'POST', pattern: '/api/v1/stats/refresh', path: '/api/v1/stats/refresh', body: {}, role: 'admin' },
  { method: 'GET', pattern: '/api/v1/dlq', path: '/api/v1/dlq?queue=rm', role: 'read-only' },
  { method: 'POST', pattern: '/api/v1/dlq/redrive', path: '/api/v1/dlq/redrive', body: { queue: 'rm' }, role: 'admin' },
  { method: 'GET', pattern: '/api/v1/messages', path: '/api/v1/messages?queue=rm', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/messages/:partitionId/:transactionId', path: `/api/v1/messages/1/${TXN}`, role: 'read-only' },
  { method: 'DELETE', pattern: '/api/v1/messages/:partitionId/:transactionId', path: `/api/v1/messages/1/${TXN}`, role: 'admin' },
  {
    method: 'POST',
    pattern: '/api/v1/messages/:partitionId/:transactionId/retry',
    path: `/api/v1/messages/1/${TXN}/retry`,
    body: {},
    role: 'admin',
  },
  {
    method: 'POST',
    pattern: '/api/v1/messages/:partitionId/:transactionId/dlq',
    path: `/api/v1/messages/1/${TXN}/dlq`,
    body: {},
    role: 'admin',
    answers: 501,
  },
  {
    method: 'POST',
    pattern: '/api/v1/traces',
    path: '/api/v1/traces',
    body: { transactionId: TXN, partitionId: '1', data: { n: 1 } },
    role: 'read-write',
  },
  { method: 'GET', pattern: '/api/v1/traces/names', path: '/api/v1/traces/names', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/traces/by-name/:name', path: '/api/v1/traces/by-name/rm', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/traces/:partitionId/:transactionId', path: `/api/v1/traces/1/${TXN}`, role: 'read-only' },
  // Queen's dashboard and Prometheus (docs/operations.md#queens-dashboard), served by the configure family.
  { method: 'GET', pattern: '/api/v1/status', path: '/api/v1/status', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/status/queues', path: '/api/v1/status/queues?limit=500', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/status/queues/:queue', path: '/api/v1/status/queues/rm', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/status/analytics', path: '/api/v1/status/analytics', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/status/buffers', path: '/api/v1/status/buffers', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/queue-ops', path: '/api/v1/analytics/queue-ops', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/queue-lag', path: '/api/v1/analytics/queue-lag', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/retention', path: '/api/v1/analytics/retention', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/worker-metrics', path: '/api/v1/analytics/worker-metrics', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/system-metrics', path: '/api/v1/analytics/system-metrics', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/queue-parked-replicas', path: '/api/v1/analytics/queue-parked-replicas', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/analytics/postgres-stats', path: '/api/v1/analytics/postgres-stats', role: 'admin' },
  { method: 'GET', pattern: '/api/v1/system/maintenance', path: '/api/v1/system/maintenance', role: 'read-only' },
  { method: 'POST', pattern: '/api/v1/system/maintenance', path: '/api/v1/system/maintenance', body: { enabled: false }, role: 'admin' },
  { method: 'GET', pattern: '/api/v1/system/maintenance/pop', path: '/api/v1/system/maintenance/pop', role: 'read-only' },
  {
    method: 'POST',
    pattern: '/api/v1/system/maintenance/pop',
    path: '/api/v1/system/maintenance/pop',
    body: { enabled: false },
    role: 'admin',
  },
  { method: 'GET', pattern: '/api/v1/system/shared-state', path: '/api/v1/system/shared-state', role: 'admin' },
  { method: 'GET', pattern: '/api/v1/migration/status', path: '/api/v1/migration/status', role: 'read-only' },
  {
    method: 'POST',
    pattern: '/api/v1/migration/:action',
    path: '/api/v1/migration/test-connection',
    body: {},
    role: 'admin',
    answers: 501,
  },
  { method: 'POST', pattern: '/streams/v1/*', path: '/streams/v1/queries', body: {}, role: 'read-write', answers: 501 },
  // Push delivery (docs/delivery.md), the delivery family.
  {
    method: 'POST',
    pattern: '/api/v1/subscriptions',
    path: '/api/v1/subscriptions',
    body: { queue: 'rm', name: 'rm-sub', url: 'https://93.184.216.34/hook' },
    role: 'admin',
  },
  { method: 'GET', pattern: '/api/v1/subscriptions', path: '/api/v1/subscriptions?queue=rm', role: 'read-only' },
  { method: 'GET', pattern: '/api/v1/subscriptions/:id', path: `/api/v1/subscriptions/${SUB}`, role: 'read-only' },
  { method: 'PATCH', pattern: '/api/v1/subscriptions/:id', path: `/api/v1/subscriptions/${SUB}`, body: { state: 'paused' }, role: 'admin' },
  { method: 'DELETE', pattern: '/api/v1/subscriptions/:id', path: `/api/v1/subscriptions/${SUB}`, role: 'admin' },
  { method: 'POST', pattern: '/api/v1/subscriptions/:id/rotate-secret', path: `/api/v1/subscriptions/${SUB}/rotate-secret`, role: 'admin' },
  {
    method: 'GET',
    pattern: '/api/v1/subscriptions/:id/attempts',
    path: `/api/v1/subscriptions/${SUB}/attempts?limit=5`,
    role: 'read-only',
  },
  { method: 'GET', pattern: '/api/me', path: '/api/me', role: 'read-only' },
  { method: 'GET', pattern: '/metrics', path: '/metrics', role: 'read-only' },
  { method: 'GET', pattern: '/metrics/prometheus', path: '/metrics/prometheus', role: 'read-only' },
];

export const ROLES: Role[] = ['read-only', 'read-write', 'admin'];
const RANK: Record<Role, number> = { 'read-only': 0, 'read-write': 1, admin: 2 };
export const allows = (have: Role, need: Role) => RANK[have] >= RANK[need];

export const describeRoute = (r: RouteCase) => `${r.method} ${r.pattern}`;
