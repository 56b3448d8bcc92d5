// Closed-loop load: `clients` loops each run a cycle until the deadline; latencies per cycle.
import { performance } from 'node:perf_hooks';

export interface Cell {
  /** Messages handled (pushed, or popped and acked). */
  msgs: number;
  /** From the first cycle's start to the last cycle's end. */
  seconds: number;
  latencies: number[];
  /** Cycles that found nothing to do (a 204 pop). */
  idle: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `cycle(client, seq)` in `clients` concurrent loops for `seconds`. A cycle returns how many
 * messages it handled; 0 counts as idle (after a short pause), and a loop that stays idle
 * `idleLimit` times in a row stops early (a drained backlog); a negative count stops the loop.
 */
export async function drive(
  clients: number,
  seconds: number,
  cycle: (client: number, seq: number) => Promise<number>,
  idleLimit = Infinity,
): Promise<Cell> {
  const latencies: number[] = [];
  let msgs = 0;
  let idle = 0;
  const start = performance.now();
  let last = start;
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      let quiet = 0;
      for (let seq = 0; performance.now() < deadline && quiet < idleLimit; seq++) {
        const t0 = performance.now();
        const n = await cycle(c, seq);
        if (n < 0) break;
        if (n === 0) {
          idle++;
          quiet++;
          await sleep(2);
          continue;
        }
        quiet = 0;
        last = performance.now();
        latencies.push(last - t0);
        msgs += n;
      }
    }),
  );
  return { msgs, seconds: (last - start) / 1000, latencies, idle };
}

export const rate = (c: Cell) => (c.seconds > 0 ? c.msgs / c.seconds : 0);

export function pct(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export const median = (xs: readonly number[]) => pct(xs, 50);

/** Merges cells of several rounds of the same configuration. */
export function merge(cells: readonly Cell[]): Cell {
  return {
    msgs: cells.reduce((n, c) => n + c.msgs, 0),
    seconds: cells.reduce((n, c) => n + c.seconds, 0),
    latencies: cells.flatMap((c) => c.latencies),
    idle: cells.reduce((n, c) => n + c.idle, 0),
  };
}

/** 12,345 or 1.2 */
export const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(n >= 10 ? 1 : 2));

/** A cycle that stops its loop (returns -1) once `left` messages' worth of cycles have started. */
export function withQuota(cycle: () => Promise<number>, batch: number) {
  const q = {
    left: 0,
    cycle: async () => {
      if (q.left <= 0) return -1;
      q.left -= batch;
      return cycle();
    },
  };
  return q;
}
