// Applies the migrations to DATABASE_URL (the pooled Neon URL is turned into the direct one).
//   DATABASE_URL=postgres://… npx tsx scripts/migrate.ts
import { migrateDeployed } from '../lib/http/runtime/migrations.js';

const report = await migrateDeployed(process.env.DATABASE_URL);
console.log(`migrated ${report.host}: ${report.applied} migration(s) applied, schema at ${report.migration}`);
