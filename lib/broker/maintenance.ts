// Maintenance mode (docs/semantics.md#maintenance-mode): two flags per tenant, so one tenant's operator cannot pause
// another's consumers. While either is on, pops answer 204 (the pop statement reads the flags);
// pushes always commit, because the database is the buffer: there is no file buffer to drain.
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';

export interface MaintenanceFlags {
  maintenance: boolean;
  popMaintenance: boolean;
}

export async function getMaintenance(db: Queryable, { tenant }: TenantContext): Promise<MaintenanceFlags> {
  const [row] = await db.query<{ maintenance: boolean; pop_maintenance: boolean }>(
    'SELECT maintenance, pop_maintenance FROM queen.tenant_settings WHERE tenant_id = $1',
    [tenant],
  );
  return { maintenance: row?.maintenance ?? false, popMaintenance: row?.pop_maintenance ?? false };
}

/** Sets the flags given, keeps the others; returns both. */
export async function setMaintenance(
  db: Queryable,
  { tenant }: TenantContext,
  change: Partial<MaintenanceFlags>,
): Promise<MaintenanceFlags> {
  const [row] = await db.query<{ maintenance: boolean; pop_maintenance: boolean }>(
    `INSERT INTO queen.tenant_settings AS s (tenant_id, maintenance, pop_maintenance)
     VALUES ($1, COALESCE($2, false), COALESCE($3, false))
     ON CONFLICT (tenant_id) DO UPDATE SET maintenance = COALESCE($2, s.maintenance),
       pop_maintenance = COALESCE($3, s.pop_maintenance), updated_at = now()
     RETURNING maintenance, pop_maintenance`,
    [tenant, change.maintenance ?? null, change.popMaintenance ?? null],
  );
  return { maintenance: row!.maintenance, popMaintenance: row!.pop_maintenance };
}

const NOTE = 'Pushes always commit to the database, which is the buffer; while either mode is on, pops answer 204.';
// Queen's buffer figures, all true here: there is no file buffer.
const NO_BUFFER = {
  bufferedMessages: 0,
  bufferHealthy: true,
  bufferStats: {
    pendingCount: 0,
    failedCount: 0,
    dbHealthy: true,
    failedFiles: { count: 0, totalBytes: 0, totalMB: 0, failoverCount: 0, qos0Count: 0 },
  },
};

/** GET /system/maintenance in Queen's shape. */
export const maintenanceStatus = (f: MaintenanceFlags) => ({
  maintenanceMode: f.maintenance,
  popMaintenanceMode: f.popMaintenance,
  ...NO_BUFFER,
  note: NOTE,
});

/** POST /system/maintenance in Queen's shape. */
export const maintenanceChanged = (f: MaintenanceFlags) => ({
  maintenanceMode: f.maintenance,
  bufferedMessages: 0,
  bufferHealthy: true,
  message: f.maintenance
    ? 'Maintenance mode ENABLED for this tenant: pops answer 204, pushes still commit.'
    : 'Maintenance mode DISABLED for this tenant: pops deliver again.',
});

/** GET and POST /system/maintenance/pop in Queen's shape. */
export const popMaintenanceStatus = (f: MaintenanceFlags) => ({
  popMaintenanceMode: f.popMaintenance,
  message: f.popMaintenance
    ? 'Pop maintenance mode is ON for this tenant: pops answer 204, pushes still commit.'
    : 'Pop maintenance mode is OFF for this tenant: normal operation.',
});
