// Wildcard pop on a queue of 10,000 consumed partitions against a one-partition queue
// (docs/semantics.md#wildcard-and-discovery-pops): push one message to a random partition, time the
// pop that must find it, ack. Measured with every partition written in the last two minutes, and
// again after an hour has "passed", plus a check that a partition whose backlog is an hour old is
// still delivered.
import type pg from 'pg';
import { performance } from 'node:perf_hooks';
import { median } from './load.js';
import { ack, pop, push, pushBody, type Popped } from './queen.js';

export interface WildcardResult {
  partitions: number;
  freshWide: number[];
  freshNarrow: number[];
  idleWide: number[];
  idleNarrow: number[];
  /** Seconds from the first write of the fill to the last fresh pop (under 120 by construction). */
  freshAge: number;
  backlogFound: boolean;
  backlogNote: string;
}

const WIDE = 'wide';
const NARROW = 'narrow';

/** Moves every timestamp of the queen schema back by `interval`, as if that much time had passed. */
export async function shiftTime(sql: pg.Client, interval: string): Promise<void> {
  const { rows } = await sql.query<{ t: string; cols: string[] }>(
    `SELECT format('%I.%I', table_schema, table_name) AS t, array_agg(column_name::text) AS cols
       FROM information_schema.columns
      WHERE table_schema = 'queen' AND data_type = 'timestamp with time zone'
      GROUP BY 1`,
  );
  for (const { t, cols } of rows) {
    await sql.query(`UPDATE ${t} SET ${cols.map((c) => `"${c}" = "${c}" - interval '${interval}'`).join(', ')}`);
  }
  // Standing in for autovacuum, which over an hour would have cleaned up behind these updates.
  const { rows: tables } = await sql.query<{ t: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = 'queen'`,
  );
  for (const { t } of tables) await sql.query(`VACUUM ANALYZE ${t}`);
}

// autoAck commits inside the pop: the fill must be consumed quickly, or it would age past 2 minutes.
async function drain(base: URL, queue: string): Promise<number> {
  let n = 0;
  for (let got: Popped | null; (got = await pop(base, `/api/v1/pop/queue/${queue}?batch=10000&partitions=1000&autoAck=true`));)
    n += got.messages.length;
  return n;
}

// Rounds of a message into a random wide partition and into the narrow one, both pops timed,
// until `count` rounds or `until` (a performance.now() deadline).
async function rounds(base: URL, partitions: number, count: number, wide: number[], narrow: number[], until = Infinity) {
  for (let r = 0; r < count && performance.now() < until; r++) {
    for (const [queue, partition, out] of [
      [WIDE, `w${Math.floor(Math.random() * partitions)}`, wide],
      [NARROW, 'n0', narrow],
    ] as const) {
      await push(
        base,
        pushBody(queue, () => partition, 1),
      );
      const t0 = performance.now();
      const popped = await pop(base, `/api/v1/pop/queue/${queue}`);
      out.push(performance.now() - t0);
      if (popped?.partition !== partition)
        throw new Error(`wildcard pop on ${queue} returned ${popped?.partition ?? '204'}, not ${partition}`);
      await ack(base, popped);
    }
  }
}

export async function measureWildcard(base: URL, sql: pg.Client, partitions = 10_000, count = 60): Promise<WildcardResult> {
  await push(
    base,
    pushBody(NARROW, () => 'n0', 1),
  );
  await drain(base, NARROW);
  const filled = performance.now();
  for (let at = 0; at < partitions; at += 1000)
    await push(
      base,
      pushBody(WIDE, (i) => `w${at + i}`, Math.min(1000, partitions - at)),
    );
  if ((await drain(base, WIDE)) !== partitions) throw new Error('the wide queue did not drain to exactly one message per partition');

  const res: WildcardResult = {
    partitions,
    freshWide: [],
    freshNarrow: [],
    idleWide: [],
    idleNarrow: [],
    freshAge: 0,
    backlogFound: false,
    backlogNote: '',
  };
  await rounds(base, partitions, count, res.freshWide, res.freshNarrow, filled + 110_000);
  res.freshAge = (performance.now() - filled) / 1000;

  await shiftTime(sql, '1 hour');
  await rounds(base, partitions, count, res.idleWide, res.idleNarrow);

  // Old backlogs: A and B get a message, one pop takes one of them (partitions=1), C gets one;
  // an hour passes; the next pops must deliver the other two, not answer 204.
  const [a, b, c] = ['w11', 'w22', 'w33'];
  await push(
    base,
    pushBody(WIDE, (i) => [a, b][i]!, 2),
  );
  const first = await pop(base, `/api/v1/pop/queue/${WIDE}?batch=1`);
  if (!first) throw new Error('backlog check: the pop after pushing to two partitions answered 204');
  await ack(base, first);
  await push(
    base,
    pushBody(WIDE, () => c, 1),
  );
  await shiftTime(sql, '1 hour');
  const want = new Set([a, b, c].filter((p) => p !== first.partition));
  const got: string[] = [];
  for (let i = 0; i < 3 && got.length < want.size; i++) {
    const p = await pop(base, `/api/v1/pop/queue/${WIDE}?batch=10`);
    if (!p) break;
    got.push(p.partition);
    await ack(base, p);
  }
  res.backlogFound = [...want].every((p) => got.includes(p));
  res.backlogNote = `wanted ${[...want].join(' + ')} an hour after their write (one left unclaimed by a pop, one written after it), got ${got.join(' + ') || '204'}`;
  return res;
}

export const ratio = (wide: number[], narrow: number[]) => median(wide) / median(narrow);
