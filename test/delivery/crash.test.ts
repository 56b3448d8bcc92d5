// A dispatcher killed (SIGKILL) while the endpoint holds its requests: after the lease the same
// batches come again under the same webhook-ids, nothing lost, order kept. Real server only: the
// dispatcher is another process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import { useDatabase } from '../support/db.js';
import { testMode } from '../support/mode.js';
import { config, offsetsByPartition, pushTo, receiver, sleep, subscribe } from './helpers.js';

const db = useDatabase();
const child = fileURLToPath(new URL('./crash-dispatcher.ts', import.meta.url));

describe.skipIf(testMode() !== 'pg')('a dispatcher killed mid-request', () => {
  it('leaves leases that expire, and the same batches are sent again with the same webhook-ids', async () => {
    let holding = true;
    const secrets = new Map<string, string>();
    // While holding, the endpoint never answers: the dispatcher is killed with the requests open.
    const r = await receiver(secrets, () => (holding ? new Promise(() => {}) : { status: 200 }));
    const sub = await subscribe(db(), 'crash', 'c', r.url, { batchSize: 4, maxInFlight: 3, timeoutMs: 1000 });
    secrets.set(sub.id, sub.secret);
    await pushTo(db(), 'crash', ['a', 'b', 'c'], 10);

    const proc = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), child], {
      env: { ...process.env, DATABASE_URL: db().url!, QUEEN_DELIVERY_ALLOW_PRIVATE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (d) => (output += d));
    proc.stderr.on('data', (d) => (output += d));
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    try {
      for (let i = 0; i < 300 && r.arrivals.length < 3; i++) await sleep(50);
    } finally {
      proc.kill('SIGKILL');
      await exited;
    }
    expect(r.arrivals.length, output).toBe(3);
    const held = r.arrivals.map((a) => ({
      id: a.headers['webhook-id'],
      partition: a.body.partition,
      offsets: a.body.messages.map((m) => m.offset),
    }));

    // Nothing is sent while the dead dispatcher's leases live.
    holding = false;
    expect((await runDelivery(db(), config, { deadline: Date.now() + 5_000 })).batches).toBe(0);
    const [lease] = await db().query<{ ms: number }>(
      `SELECT ceil(extract(epoch FROM max(lease_expires_at) - now()) * 1000)::int AS ms FROM queen.log_consumers WHERE consumer_group = 'c'`,
    );
    expect(lease!.ms).toBeGreaterThan(0);
    expect(lease!.ms).toBeLessThanOrEqual(6000);
    await sleep(lease!.ms + 100);

    const report = await runDelivery(db(), config, { deadline: Date.now() + 20_000 });
    expect(report.delivered).toBe(30);
    expect(r.badSignatures).toEqual([]);
    const resent = r.arrivals.slice(3);
    for (const h of held) {
      const again = resent.find((a) => a.body.partition === h.partition)!;
      expect(again.headers['webhook-id']).toBe(h.id);
      expect(again.body.messages.map((m) => m.offset)).toEqual(h.offsets);
      expect(again.headers['queen-attempt']).toBe('1');
    }
    const seen = offsetsByPartition(resent);
    for (const p of ['a', 'b', 'c']) expect(seen.get(p)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await r.close();
  });
});
