// /metrics/prometheus read by a real text-format parser, held to the format's rules (each family
// once, typed, helped, its samples together), every figure checked against the log tables.
import parsePrometheus, { type ParsedFamily } from 'parse-prometheus-text-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
const api = testClient(db);
const viewer = testClient(db, { as: { role: 'read-only' } });
const other = testClient(db, { as: { tenant: 'prom-other' } });
const WEIRD = 'we"ird\\queue';

/** Parses and holds the text to the exposition format; returns family name -> samples. */
function strictParse(text: string): Map<string, ParsedFamily> {
  const families = parsePrometheus(text);
  const names = families.map((f) => f.name);
  expect(
    names.filter((n, i) => names.indexOf(n) !== i),
    'families that appear more than once',
  ).toEqual([]);
  for (const f of families) {
    expect(['GAUGE', 'COUNTER'], `${f.name} has a TYPE`).toContain(f.type);
    expect(f.help, `${f.name} has a HELP`).not.toBe('');
    expect(f.metrics.length, `${f.name} has samples`).toBeGreaterThan(0);
    for (const m of f.metrics) expect(Number.isFinite(Number(m.value)), `${f.name} ${m.value}`).toBe(true);
  }
  return new Map(families.map((f) => [f.name, f]));
}

const sample = (f: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}) => {
  const hit = f.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return hit === undefined ? undefined : Number(hit.value);
};

async function scrape(client = api) {
  const res = await client.app.request('/metrics/prometheus');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

beforeAll(async () => {
  await api.pushNumbered('prom.orders', 'a', 4);
  await api.pushNumbered('prom.orders', 'a', 2, (i) => `again-${i}`, 4);
  await api.pushNumbered('prom.orders', 'b', 3);
  await api.pushNumbered(WEIRD, 'p"1', 1);
  await api.configure('prom.dead', { retryLimit: 0 });
  await api.pushNumbered('prom.dead', 'Default', 2);
  const m = (await api.popQueue('prom.dead', { batch: 1 })).body.messages[0]!;
  await api.ack({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'dlq', error: 'x' });
  await api.popQueue('prom.orders', { consumerGroup: 'billing', batch: 5, autoAck: true }, 'a');
  await api.popQueue('prom.orders', { consumerGroup: 'billing', batch: 2 }, 'b');
  await other.pushNumbered('prom.secret', 'Default', 5);
});

describe('GET /metrics/prometheus', () => {
  it("is valid text format for a real parser, and the strict reading rejects Queen's interleaved families", async () => {
    strictParse(await scrape());
    const interleaved = '# HELP a x\n# TYPE a gauge\n# HELP b y\n# TYPE b gauge\na{queue="q1"} 1\nb{queue="q1"} 2\na{queue="q2"} 3\n';
    expect(() => strictParse(interleaved)).toThrow(/more than once/);
  });

  it("gives every partition's last_offset and log_start, escaping label values", async () => {
    const f = strictParse(await scrape());
    const rows = await db().query<{ queue: string; partition: string; last_offset: string; log_start: string }>(
      `SELECT q.name AS queue, p.name AS partition, p.last_offset, p.log_start FROM queen.log_partitions p
         JOIN queen.queues q ON q.id = p.queue_id WHERE q.tenant_id = 'default'`,
    );
    expect(f.get('queen_partition_last_offset')!.metrics).toHaveLength(rows.length);
    for (const r of rows) {
      expect(sample(f, 'queen_partition_last_offset', { queue: r.queue, partition: r.partition })).toBe(Number(r.last_offset));
      expect(sample(f, 'queen_partition_log_start', { queue: r.queue, partition: r.partition })).toBe(Number(r.log_start));
    }
    expect(sample(f, 'queen_partition_last_offset', { queue: WEIRD, partition: 'p"1' })).toBe(0);
  });

  it('gives per-queue totals: held, pushed, dead letters, segments with their bytes, sidecar bytes', async () => {
    const f = strictParse(await scrape());
    const truth = await db().query<{
      queue: string;
      held: string;
      pushed: string;
      segments: string;
      bytes: string;
      sidecar: string;
      dead: string;
    }>(
      `SELECT q.name AS queue,
              (SELECT sum(p.last_offset - p.log_start + 1) FROM queen.log_partitions p WHERE p.queue_id = q.id) AS held,
              (SELECT sum(p.last_offset + 1) FROM queen.log_partitions p WHERE p.queue_id = q.id) AS pushed,
              (SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id WHERE p.queue_id = q.id) AS segments,
              (SELECT sum(octet_length(s.blob)) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id WHERE p.queue_id = q.id) AS bytes,
              (SELECT sum(octet_length(t.hashes)) FROM queen.log_txns t JOIN queen.log_partitions p ON p.id = t.partition_id WHERE p.queue_id = q.id) AS sidecar,
              (SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id WHERE p.queue_id = q.id) AS dead
         FROM queen.queues q WHERE q.tenant_id = 'default'`,
    );
    expect(truth).toHaveLength(3);
    for (const t of truth) {
      const queue = { queue: t.queue };
      expect([t.queue, sample(f, 'queen_queue_messages', queue)]).toEqual([t.queue, Number(t.held)]);
      expect(sample(f, 'queen_queue_pushed_messages_total', queue)).toBe(Number(t.pushed));
      expect(sample(f, 'queen_queue_segments', queue)).toBe(Number(t.segments));
      expect(sample(f, 'queen_queue_segment_bytes', queue)).toBe(Number(t.bytes));
      expect(sample(f, 'queen_queue_sidecar_bytes', queue)).toBe(Number(t.sidecar));
      expect(sample(f, 'queen_dlq_depth_by_queue', queue)).toBe(Number(t.dead));
    }
    expect(sample(f, 'queen_dlq_depth', { scope: 'cluster' })).toBe(1);
    expect(sample(f, 'queen_cluster_push_messages_total', { scope: 'cluster' })).toBe(4 + 2 + 3 + 1 + 2);
    expect(sample(f, 'queen_partitions')).toBe(4);
    expect(f.get('queen_maintenance_mode_enabled')!.type).toBe('GAUGE');
    expect(f.get('queen_queue_pushed_messages_total')!.type).toBe('COUNTER');
  });

  it("gives each consumer group's lag, oldest unconsumed age, leases and consumption", async () => {
    const before = Number(
      (
        await db().query<{ s: string }>(
          `SELECT extract(epoch FROM now() - min(s.created_at)) AS s FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
         JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'prom.orders' AND p.name = 'b'`,
        )
      )[0]!.s,
    );
    const f = strictParse(await scrape());
    const billing = { queue: 'prom.orders', consumer_group: 'billing' };
    // a: 6 pushed, 5 consumed; b: 3 pushed, 2 leased.
    expect(sample(f, 'queen_consumer_lag_messages', billing)).toBe(1 + 3);
    expect(sample(f, 'queen_consumer_in_flight_messages', billing)).toBe(2);
    expect(sample(f, 'queen_consumer_leased_partitions', billing)).toBe(1);
    expect(sample(f, 'queen_consumer_consumed_messages_total', billing)).toBe(5);
    expect(sample(f, 'queen_consumer_partitions', billing)).toBe(2);
    const age = sample(f, 'queen_consumer_oldest_unconsumed_age_seconds', billing)!;
    expect(age).toBeGreaterThanOrEqual(before);
    expect(age).toBeLessThan(before + 30);
    expect(sample(f, 'queen_consumer_lag_messages', { queue: 'prom.dead', consumer_group: '__QUEUE_MODE__' })).toBe(1);
  });

  it("shows only the caller's tenant, and database-wide table sizes only to an admin", async () => {
    const mine = await scrape();
    expect(mine).not.toContain('prom.secret');
    expect(
      strictParse(mine)
        .get('queen_table_bytes')!
        .metrics.map((m) => m.labels?.table),
    ).toContain('log_segments');
    const theirs = strictParse(await scrape(other));
    expect(sample(theirs, 'queen_queue_messages', { queue: 'prom.secret' })).toBe(5);
    expect(sample(theirs, 'queen_partitions')).toBe(1);
    expect(strictParse(await scrape(viewer)).has('queen_table_bytes')).toBe(false);
  });

  it('leaves per-partition series out past QUEEN_METRICS_PARTITION_SERIES, saying so, and keeps the aggregates', async () => {
    const capped = testClient(db, { config: { metricsPartitionSeries: 3 } });
    const text = await scrape(capped);
    const f = strictParse(text);
    expect(f.has('queen_partition_last_offset')).toBe(false);
    expect(text).toMatch(
      /^# queen_partition_last_offset and queen_partition_log_start omitted: 4 partitions exceed QUEEN_METRICS_PARTITION_SERIES=3$/m,
    );
    expect(sample(f, 'queen_queue_messages', { queue: 'prom.orders' })).toBe(9);
  });
});

describe('GET /metrics', () => {
  it("answers Queen's JSON keys with the tenant's lifetime pushes and null for what is not counted", async () => {
    const { status, body } = await api.call('GET', '/metrics');
    expect(status).toBe(200);
    expect(body.messages.total).toBe(12);
    expect(typeof body.messages.rate).toBe('number');
    expect(body.requests).toEqual({ total: null, rate: null });
    expect(body.database).toEqual({ poolSize: null, idleConnections: null, waitingRequests: null });
    expect(typeof body.uptime).toBe('number');
    expect(body.memory.rss).toBeGreaterThan(0);
    expect(body.deployment.kind).toBe('serverless');
  });
});
