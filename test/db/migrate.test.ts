import { describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import { migrate, readMigrations } from '../../lib/db/migrate.js';
import { appliedHashes } from '../../lib/db/schema-version.js';
import { emptyDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

describe.skipIf(testMode() !== 'pg')('migrating a database', () => {
  it('succeeds when two processes migrate an empty database at the same moment, applying each migration once', async () => {
    const a = await emptyDatabase();
    const b = await connect({ url: a.url, driver: 'pg', max: 1 });
    try {
      expect(await appliedHashes(a)).toBeNull();
      const [x, y] = await Promise.all([migrate(a), migrate(b)]);
      const total = (await a.query<{ n: string }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations'))[0]!.n;
      expect(x + y).toBe(Number(total));
      expect([x, y]).toContain(0);
      expect(await appliedHashes(b)).toEqual(readMigrations().map((m) => m.hash));
    } finally {
      await b.close();
      await a.dispose();
    }
  });
});
