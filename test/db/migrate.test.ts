import { describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import { migrate } from '../../lib/db/migrate.js';
import { appliedMigration, EXPECTED_MIGRATION } from '../../lib/db/schema-version.js';
import { adminUrl, databaseUrl, testMode } from '../support/mode.js';

describe.skipIf(testMode() !== 'pg')('migrating a database', () => {
  it('succeeds when two processes migrate an empty database at the same moment, applying each migration once', async () => {
    const name = `queen_t${process.ppid}_${process.pid}_migrate`;
    const admin = await connect({ url: adminUrl(), driver: 'pg', max: 1 });
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const a = await connect({ url: databaseUrl(name), driver: 'pg', max: 1 });
    const b = await connect({ url: databaseUrl(name), driver: 'pg', max: 1 });
    try {
      expect(await appliedMigration(a)).toBeNull();
      const [x, y] = await Promise.all([migrate(a), migrate(b)]);
      const total = (await a.query<{ n: string }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations'))[0]!.n;
      expect(x + y).toBe(Number(total));
      expect([x, y]).toContain(0);
      expect(await appliedMigration(b)).toBe(EXPECTED_MIGRATION);
    } finally {
      await a.close();
      await b.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    }
  });
});
