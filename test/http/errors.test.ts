// How failures become responses (docs/semantics.md#errors-and-availability): a database that is
// down, restarting or full is a 503 with Retry-After, never a 500; a stored segment that does not
// decode is our 500 with its own code, its location logged for the operator and not sent to the
// client.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connect } from '../../lib/db/client.js';
import type { Database } from '../../lib/db/types.js';
import { RETRY_AFTER_SECONDS } from '../../lib/http/errors.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';

const db = useDatabase();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A database whose every statement fails with `err`, as one does while PostgreSQL restarts. */
const failingWith = (err: unknown): Database => ({
  driver: 'pg',
  query: () => Promise.reject(err),
  transaction: () => Promise.reject(err),
  close: async () => {},
});

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('a database that cannot serve the request', () => {
  it.each([
    ['57P03', 'the database system is starting up'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection because of crash of another server process'],
    ['53300', 'sorry, too many clients already'],
    ['08006', 'connection failure'],
  ])('answers SQLSTATE %s with 503 database_unavailable and a Retry-After header', async (code, message) => {
    const logs: string[] = [];
    const res = await testClient(failingWith(pgError(code, message)), { log: (m) => logs.push(m) }).call('GET', '/api/v1/pop/queue/q');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('database_unavailable');
    expect(res.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
    expect(res.text).not.toContain(message);
    expect(logs).toEqual(['database unavailable on GET /api/v1/pop/queue/q']);
  });

  it.each([
    ['40P01', 'deadlock detected'],
    ['40001', 'could not serialize access due to concurrent update'],
  ])("answers SQLSTATE %s that outlived the driver's retries with 503 database_conflict and Retry-After: 1", async (code, message) => {
    const res = await testClient(failingWith(pgError(code, message))).call('GET', '/api/v1/pop/queue/q');
    expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([503, 'database_conflict', '1']);
    expect(res.text).not.toContain(message);
  });

  it.skipIf(testMode() !== 'pg')('runs a transaction again when PostgreSQL picks it as a deadlock victim, and it commits', async () => {
    const wrapped = await connect({ url: db().url, driver: 'pg', max: 2 });
    const other = new pg.Client({ connectionString: db().url });
    await other.connect();
    try {
      await db().query('CREATE TABLE deadlock_pair (id int PRIMARY KEY, n int)');
      await db().query('INSERT INTO deadlock_pair VALUES (1, 0), (2, 0)');
      // The other session waits 10 s before it looks for a deadlock; ours 50 ms: ours is the victim.
      await other.query(`SET deadlock_timeout = '10s'`);
      await other.query('BEGIN');
      await other.query('UPDATE deadlock_pair SET n = n + 10 WHERE id = 1');
      let attempts = 0;
      let holdsTwo!: () => void;
      const oursHoldsTwo = new Promise<void>((resolve) => (holdsTwo = resolve));
      const ours = wrapped.transaction(async (tx) => {
        attempts++;
        await tx.query(`SET LOCAL deadlock_timeout = '50ms'`);
        await tx.query('UPDATE deadlock_pair SET n = n + 1 WHERE id = 2');
        if (attempts === 1) {
          holdsTwo();
          await sleep(300);
        }
        // The first time this closes the cycle (the other session waits for row 2), and after 50 ms
        // PostgreSQL aborts this transaction; the retry waits for the other session's commit.
        await tx.query('UPDATE deadlock_pair SET n = n + 1 WHERE id = 1');
        return attempts;
      });
      await oursHoldsTwo;
      const theirs = other.query('UPDATE deadlock_pair SET n = n + 10 WHERE id = 2').then(() => other.query('COMMIT'));
      await theirs;
      expect(await ours).toBe(2);
      expect(await db().query('SELECT id, n FROM deadlock_pair ORDER BY id')).toEqual([
        { id: 1, n: 11 },
        { id: 2, n: 11 },
      ]);
    } finally {
      await other.end();
      await wrapped.close();
    }
  });

  it('answers a refused connection (nothing listening on the port) with 503 and Retry-After', async () => {
    const nowhere = await connect({ url: 'postgres://postgres@127.0.0.1:7101/queen', driver: 'pg', max: 1 });
    try {
      const res = await testClient(nowhere).call('POST', '/api/v1/push', { items: [{ queue: 'q', payload: 1 }] });
      expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([
        503,
        'database_unavailable',
        String(RETRY_AFTER_SECONDS),
      ]);
    } finally {
      await nowhere.close();
    }
  });

  it('answers an error that is ours, not the database being away, with a plain 500 and no Retry-After', async () => {
    const ours = await db()
      .query('SELECT 1 / 0')
      .catch((err: unknown) => err);
    const res = await testClient(failingWith(ours)).call('GET', '/api/v1/pop/queue/q');
    expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([500, 'internal_error', null]);
  });

  it.skipIf(testMode() !== 'pg')('answers 503 with Retry-After when the backend serving the request is terminated (57P01)', async () => {
    const client = testClient(db);
    await client.push('terminated', 'p', [0]);
    const holder = new pg.Client({ connectionString: db().url });
    holder.on('error', () => {});
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'terminated' FOR UPDATE OF p`,
      );
      const pending = client.call('POST', '/api/v1/push', { items: [{ queue: 'terminated', partition: 'p', payload: 1 }] });
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        const [row] = await db().query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%push_segments%' AND wait_event_type = 'Lock'`,
        );
        pid = row?.pid;
        if (pid === undefined) await sleep(25);
      }
      expect(pid, 'the push never waited on the partition lock').toBeDefined();
      await db().query('SELECT pg_terminate_backend($1)', [pid]);
      const res = await pending;
      expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([
        503,
        'database_unavailable',
        String(RETRY_AFTER_SECONDS),
      ]);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end().catch(() => {});
    }
  });
});

describe('a stored segment that does not decode', () => {
  async function damagedSegment(queue: string) {
    const client = testClient(db);
    const [pushed] = await client.push(queue, 'p', [{ n: 0 }, { n: 1 }, { n: 2 }], [`${queue}-0`, `${queue}-1`, `${queue}-2`]);
    const [seg] = await db().query<{ base_offset: string; blob: Uint8Array }>(
      'SELECT base_offset, blob FROM queen.log_segments WHERE partition_id = $1',
      [pushed!.partition_id],
    );
    const blob = Uint8Array.from(seg!.blob);
    const at = blob.length >> 1;
    blob[at] = blob[at]! ^ 0xff;
    await db().query('UPDATE queen.log_segments SET blob = $2 WHERE partition_id = $1', [pushed!.partition_id, blob]);
    return { partitionId: pushed!.partition_id, baseOffset: seg!.base_offset };
  }

  it('answers a pop with 500 corrupt_segment and logs the partition and offset without sending them', async () => {
    const { partitionId, baseOffset } = await damagedSegment('damaged-pop');
    const logs: string[] = [];
    const res = await testClient(db, { log: (m) => logs.push(m) }).call('GET', '/api/v1/pop/queue/damaged-pop?batch=10');
    expect([res.status, res.body.code]).toEqual([500, 'corrupt_segment']);
    expect(res.text).not.toContain(partitionId);
    expect(logs).toEqual([
      `unreadable segment on GET /api/v1/pop/queue/damaged-pop: partition ${partitionId}, segment at offset ${baseOffset}`,
    ]);
  });

  it('answers the message detail route with the same code', async () => {
    const { partitionId } = await damagedSegment('damaged-get');
    const res = await testClient(db).call('GET', `/api/v1/messages/${partitionId}/damaged-get-1`);
    expect([res.status, res.body.code]).toEqual([500, 'corrupt_segment']);
  });
});
