// Lease extend (docs/semantics.md#lease-extend): pushes out the expiry of every live lease with
// this id.
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';

export interface ExtendResult {
  index: 0;
  leaseId: string;
  success: boolean;
  error: string | null;
  expiresAt: string | null;
}

export interface LeaseExtend {
  leaseId: string;
  seconds: number;
}

export async function extendLease(db: Queryable, { tenant }: TenantContext, req: LeaseExtend): Promise<ExtendResult[]> {
  const { leaseId, seconds } = req;
  const [row] = await db.query<{ live: number; expired: number; expires_at: Date | null }>(
    'SELECT * FROM queen.extend_lease(p_tenant => $1, p_lease => $2, p_seconds => $3)',
    [tenant, leaseId, seconds],
  );
  const live = row?.live ?? 0;
  const error = live > 0 ? null : (row?.expired ?? 0) > 0 ? 'Lease already expired' : 'Lease not found';
  return [{ index: 0, leaseId, success: live > 0, error, expiresAt: row?.expires_at ? row.expires_at.toISOString() : null }];
}
