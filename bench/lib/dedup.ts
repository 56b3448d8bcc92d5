// Exact dedup with a full window (docs/storage.md#the-duplicate-probe): pushes (4 clients x batch
// 100, all into one partition, so serialised on its lock) into a partition holding 1,000,000 hashes
// vs an empty one. The window is filled through the push route itself, so whatever structure push
// maintains is measured as it is built. Rounds alternate full / a fresh empty partition, so load
// hits both alike.
import { drive, merge, rate, type Cell } from './load.js';
import { addUsage, type Meter, type Usage } from './meter.js';
import { push, pushBody } from './queen.js';

const QUEUE = 'dedup';

export interface DedupResult {
  hashes: number;
  fillSeconds: number;
  emptyBefore: { cell: Cell; cpu: Usage };
  full: { cell: Cell; cpu: Usage };
  empty: { cell: Cell; cpu: Usage };
}

async function load(meter: Meter, base: URL, partition: string, seconds: number) {
  const { out: cell, cpu } = await meter.window(() =>
    drive(4, seconds, () =>
      push(
        base,
        pushBody(QUEUE, () => partition, 100),
      ),
    ),
  );
  return { cell, cpu };
}

export async function measureDedup(meter: Meter, base: URL, seconds: number, roundCount: number, hashes = 1_000_000): Promise<DedupResult> {
  await push(
    base,
    pushBody(QUEUE, () => 'warm', 100),
  );
  const emptyBefore = await load(meter, base, 'empty-before', seconds);
  const t0 = performance.now();
  let next = 0;
  await drive(
    4,
    1e6,
    async () => {
      if (next >= hashes) return 0;
      const n = Math.min(1000, hashes - next);
      next += n;
      return push(
        base,
        pushBody(QUEUE, () => 'full', n),
      );
    },
    1,
  );
  const fillSeconds = (performance.now() - t0) / 1000;
  const full: { cell: Cell; cpu: Usage }[] = [];
  const empty: { cell: Cell; cpu: Usage }[] = [];
  for (let r = 0; r < roundCount; r++) {
    full.push(await load(meter, base, 'full', seconds));
    empty.push(await load(meter, base, `empty-${r}`, seconds));
  }
  const join = (xs: { cell: Cell; cpu: Usage }[]) => ({ cell: merge(xs.map((x) => x.cell)), cpu: addUsage(xs.map((x) => x.cpu)) });
  return { hashes, fillSeconds, emptyBefore, full: join(full), empty: join(empty) };
}

/** How many times slower a push into the full partition is (msgs/s of empty over full). */
export const slowdown = (r: DedupResult, empty: Cell) => rate(empty) / rate(r.full.cell);
