// Runs the benchmarks by hand, one after another: `npm run bench` (all) or `npm run bench -- push pop-ack`.
// Each prints its configuration, its figures and ratios against the peer it runs beside.
import { spawnSync } from 'node:child_process';

const ALL = [
  'targets',
  'queen-side',
  'floor',
  'http-layers',
  'adapters',
  'pg-driver',
  'codec',
  'push',
  'pop-ack',
  'pop-cost',
  'retention',
  'cold-start',
  'worker-startup',
  'metrics',
  'faults',
  'client',
  'delivery',
];
const chosen = process.argv.slice(2).length ? process.argv.slice(2) : ALL;

for (const name of chosen) {
  if (!ALL.includes(name)) {
    console.error(`unknown benchmark "${name}"; choose from ${ALL.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n=== bench/${name}.ts ===`);
  const run = spawnSync('npx', ['tsx', `bench/${name}.ts`], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
