// A/B of two checkouts (or two settings of one) under the targets' load (bench/lib/workload.ts), for experiments: both
// servers run against one private PostgreSQL (databases a and b) and take turns, window by window,
// so load from other work hits both alike. Prints msgs/s and CPU per message for each and B/A.
//   BENCH_B=/path/to/other/checkout npx tsx bench/ab.ts [push] [pop]
// BENCH_A / BENCH_B: checkouts (default: this one); BENCH_A_ENV / BENCH_B_ENV: "K=V,K=V" for that
// server (e.g. QUEEN_V2_ZSTD_LEVEL=1); BENCH_A_NODE / BENCH_B_NODE: node flags; BENCH_SECONDS (4),
// BENCH_ROUNDS (4).
import { schemaBytes, totalBytes } from './lib/bytes.js';
import { drive, fmt, median, merge, rate, withQuota, type Cell } from './lib/load.js';
import { addUsage, Meter, perMsg, type Usage } from './lib/meter.js';
import { parseSettings, startCluster, withClient } from './lib/postgres.js';
import { SERVER_DIR, startServer, type Server } from './lib/server.js';
import { BATCH, CLIENTS, fill, popCycle, pushCycle } from './lib/workload.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const BACKLOG = 20_000;
const phases = process.argv.slice(2).length ? process.argv.slice(2) : ['push', 'pop'];
const sides = (['A', 'B'] as const).map((name, i) => ({
  name,
  dir: process.env[`BENCH_${name}`] ?? SERVER_DIR,
  env: parseSettings(process.env[`BENCH_${name}_ENV`]),
  nodeArgs: (process.env[`BENCH_${name}_NODE`] ?? '').split(' ').filter(Boolean),
  db: ['a', 'b'][i]!,
  port: 7212 + i,
}));

const cluster = startCluster({ port: 7250, settings: parseSettings(process.env.BENCH_PG_SETTINGS) });
const servers: Server[] = [];
try {
  for (const s of sides) await withClient(cluster.url('postgres'), (c) => c.query(`CREATE DATABASE ${s.db}`));
  for (const s of sides)
    servers.push(await startServer({ databaseUrl: cluster.url(s.db), port: s.port, dir: s.dir, env: s.env, nodeArgs: s.nodeArgs }));
  const meters = servers.map((srv) => new Meter(srv.pid, cluster.postmasterPid()));
  const report = (what: string, runs: { cell: Cell; cpu: Usage }[][]) => {
    const [a, b] = runs.map((r) => ({ cell: merge(r.map((x) => x.cell)), cpu: addUsage(r.map((x) => x.cpu)) }));
    const line = (n: string, x: typeof a) =>
      `  ${n}: ${fmt(rate(x!.cell)).padStart(7)} msgs/s  server ${perMsg(x!.cpu.server, x!.cell.msgs).toFixed(2).padStart(6)} µs/msg  PostgreSQL ${perMsg(x!.cpu.postgres, x!.cell.msgs).toFixed(2).padStart(6)} µs/msg`;
    const ratio = (f: (x: NonNullable<typeof a>) => number) => (f(b!) / f(a!)).toFixed(3);
    console.log(`${what}:\n${line('A', a)}\n${line('B', b)}`);
    console.log(
      `  B/A: msgs/s ${ratio((x) => rate(x.cell))}, server CPU/msg ${ratio((x) => perMsg(x.cpu.server, x.cell.msgs))}, PostgreSQL CPU/msg ${ratio((x) => perMsg(x.cpu.postgres, x.cell.msgs))}`,
    );
    // Paired by round (B ran right after A): the median and range of B/A say how sure the total is.
    const paired = (f: (x: { cell: Cell; cpu: Usage }) => number) => {
      const rs = runs[0]!.map((x, i) => f(runs[1]![i]!) / f(x)).sort((p, q) => p - q);
      return `${median(rs).toFixed(3)} [${rs[0]!.toFixed(2)}..${rs.at(-1)!.toFixed(2)}]`;
    };
    console.log(
      `  B/A by round, median [range]: server CPU/msg ${paired((x) => perMsg(x.cpu.server, x.cell.msgs))}, PostgreSQL CPU/msg ${paired((x) => perMsg(x.cpu.postgres, x.cell.msgs))}`,
    );
  };
  for (const s of sides)
    console.log(
      `${s.name}: ${s.dir} ${s.nodeArgs.join(' ')} ${Object.entries(s.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    );
  console.log(`${ROUNDS} alternating windows per side, ${CLIENTS} clients x batch ${BATCH}\n`);

  if (phases.includes('push')) {
    const runs: { cell: Cell; cpu: Usage }[][] = [[], []];
    for (const srv of servers) await drive(CLIENTS, 1, pushCycle(srv.base, 'bench'));
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < 2; i++) {
        const { out, cpu } = await meters[i]!.window(() => drive(CLIENTS, SECONDS, pushCycle(servers[i]!.base, 'bench')));
        runs[i]!.push({ cell: out, cpu });
      }
    }
    report('push', runs);
    const bytes: string[] = [];
    for (const s of sides) {
      await withClient(cluster.url(s.db), async (c) => {
        const n = Number((await c.query(`SELECT coalesce(sum(end_offset - base_offset + 1), 0) AS n FROM queen.log_segments`)).rows[0].n);
        bytes.push(`${s.name} ${(totalBytes(await schemaBytes(c, 'queen')) / n).toFixed(1)}`);
      });
    }
    console.log(`  bytes per message: ${bytes.join(', ')}`);
  }
  if (phases.includes('pop')) {
    const runs: { cell: Cell; cpu: Usage }[][] = [[], []];
    const backlog = [0, 0];
    const quotas = servers.map((srv, i) =>
      withQuota(async () => {
        const n = await popCycle(srv.base, 'consume')();
        backlog[i]! -= n;
        return n;
      }, BATCH),
    );
    for (let r = -1; r < ROUNDS; r++) {
      for (let i = 0; i < 2; i++) {
        backlog[i]! += await fill(servers[i]!.base, 'consume', BACKLOG - backlog[i]!);
        quotas[i]!.left = r < 0 ? 1000 : BACKLOG / 2;
        const { out, cpu } = await meters[i]!.window(() => drive(CLIENTS, 1e6, quotas[i]!.cycle));
        if (r >= 0) runs[i]!.push({ cell: out, cpu });
      }
    }
    report('pop+ack', runs);
  }
} finally {
  for (const s of servers) await s.stop();
  cluster.stop();
}
