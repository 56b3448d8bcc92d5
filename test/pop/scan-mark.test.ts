// Real PostgreSQL only, and slow on purpose: a session left idle in a transaction (a forgotten
// psql, another program) is the oldest open transaction for as long as it stays open. The wildcard
// scan's mark follows the oldest open transaction but never lags more than two minutes
// (docs/locking.md#the-wildcard-scan); this waits those two minutes out with such a session open.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { wildcardPopReads } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(testMode() !== 'pg')('the scan mark beside a transaction left open', () => {
  const db = useDatabase();

  it('stops following a transaction open for over two minutes: a pop reads a handful of rows, not every partition written since', async () => {
    const b = testClient(db);
    const holder = new pg.Client({ connectionString: db().url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT txid_current()');
      // Written and consumed while the session is open: the mark cannot pass its start yet.
      for (let i = 0; i < 60; i++) await b.pushNumbered('held-open', `p${i}`, 1);
      for (;;) {
        const r = await b.pop('queue/held-open?batch=100&partitions=100');
        if (r.status === 204) break;
        await b.ackAll(r.body);
      }
      // Two minutes on, the session still open: the mark moves past those writes all the same.
      await sleep(125_000);
      expect((await b.pop('queue/held-open')).status).toBe(204);
      await b.pushNumbered('held-open', 'p17', 1, undefined, 1);
      const { partitions, reads } = await wildcardPopReads(db(), 'held-open');
      expect(partitions).toEqual(['p17']);
      expect(reads.log_partitions).toBeLessThan(12);
      expect(reads.log_consumers).toBeLessThan(12);
    } finally {
      await holder.end();
    }
  }, 200_000);
});
