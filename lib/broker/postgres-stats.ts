// GET /api/v1/analytics/postgres-stats: PostgreSQL's own statistics for the queen schema, real and
// database-wide (so the route is for admins), in the shape of Queen's System page.
import type { Queryable } from '../db/types.js';

export async function readPostgresStats(db: Queryable): Promise<Record<string, unknown>> {
  const [row] = await db.query<{ j: Record<string, unknown> }>('SELECT queen.postgres_stats() AS j');
  return row!.j;
}
