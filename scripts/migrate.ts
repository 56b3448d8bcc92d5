// Applies the migrations to DATABASE_URL (the pooled Neon URL is turned into the direct one).
//   DATABASE_URL=postgres://… npx tsx scripts/migrate.ts
import { migrateDeployed } from '../lib/http/runtime/migrations.js';

const report = await migrateDeployed(process.env.DATABASE_URL);
const repaired = report.repaired.length
  ? `, ${report.repaired.length} stale migration(s) brought up to date (${report.repaired.join(', ')})`
  : '';
console.log(`migrated ${report.host}: ${report.applied.length} migration(s) applied${repaired}, schema at ${report.migration}`);
