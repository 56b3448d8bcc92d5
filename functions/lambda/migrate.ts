// AWS Lambda the deploy invokes once per `sst deploy` (aws.lambda.Invocation): applies drizzle/
// over the direct, non-pooled URL before the new functions go live (docs/semantics.md#migrations).
import { migrateDeployed } from '../../lib/http/runtime/migrations.js';

export const handler = async () => {
  const folder = `${process.env.LAMBDA_TASK_ROOT ?? '.'}/drizzle`;
  return migrateDeployed(process.env.DATABASE_URL, folder);
};
