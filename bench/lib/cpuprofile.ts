// A V8 CPU profile (Profiler.stop / node --cpu-prof) summarised by self time: per function, and per
// place (package, our lib/ file, node internals, wasm, GC).
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  ms: number;
  share: number;
}

// Where a frame's code lives, in the terms of the breakdown under bench/README.md#figures.
export function placeOf(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)' || fn === '(program)' || fn === '(root)') return fn;
  if (url.startsWith('wasm://')) return 'wasm (zstd)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /\/((?:lib|functions)\/.+?)(?:\?.*)?$/.exec(url);
  if (ours) return ours[1]!;
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:');
  return url === '' ? '(native)' : url;
}

function selfTimes(p: CpuProfile): Map<number, number> {
  const ms = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) ms.set(p.samples[i]!, (ms.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  return ms;
}

function rank(totals: Map<string, number>, all: number, top: number): Share[] {
  return [...totals.entries()]
    .map(([name, ms]) => ({ name, ms, share: ms / all }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top);
}

/** Self time by function and by place, as shares of the busy (non-idle) time. */
export function summarise(p: CpuProfile, top = 25): { busyMs: number; functions: Share[]; places: Share[] } {
  const self = selfTimes(p);
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let busy = 0;
  for (const n of p.nodes) {
    const ms = self.get(n.id) ?? 0;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)' || ms === 0) continue;
    busy += ms;
    const place = placeOf(url, functionName);
    const key = `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
    byPlace.set(place, (byPlace.get(place) ?? 0) + ms);
  }
  return { busyMs: busy, functions: rank(byFunction, busy, top), places: rank(byPlace, busy, top) };
}

export const formatShares = (xs: Share[]) =>
  xs.map((x) => `${(x.share * 100).toFixed(1).padStart(5)}%  ${x.ms.toFixed(0).padStart(6)} ms  ${x.name}`);

/**
 * Who calls `fn` (e.g. the native writev): its self time grouped by the nearest caller that is our
 * code or a package, so "socket writes" splits into the HTTP response and the database driver.
 */
export function callersOf(p: CpuProfile, fn: string, top = 8): Share[] {
  const self = selfTimes(p);
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let all = 0;
  for (const n of p.nodes) {
    if (n.callFrame.functionName !== fn) continue;
    const ms = self.get(n.id) ?? 0;
    all += ms;
    let at = parent.get(n.id);
    let name = '(unknown)';
    while (at !== undefined) {
      const f = byId.get(at)!.callFrame;
      const place = placeOf(f.url, f.functionName);
      if (!place.startsWith('node:') && place !== '(native)') {
        name = `${f.functionName || '(anonymous)'} ${place}:${f.lineNumber + 1}`;
        break;
      }
      at = parent.get(at);
    }
    totals.set(name, (totals.get(name) ?? 0) + ms);
  }
  return rank(totals, all, top);
}
