// The keys a request object may carry (docs/api.md#validation): an unknown key is a 400 naming it
// and the nearest known key, since a misspelt field accepted silently is data stored wrong
// ({"data": …} where push takes "payload" stores null). Every key Queen's clients send is known.
import { badRequest } from '../../errors.js';

export interface KeySet {
  readonly known: ReadonlySet<string>;
  readonly required: readonly string[];
  /** Likely mistakes the edit distance would not find: `data` → `payload`, `retryLimit` → `options.retryLimit`. */
  readonly hints: Readonly<Record<string, string>>;
  /** What the keys are called in messages: `key` in a body, `query parameter` in a URL. */
  readonly noun: string;
}

export function keySet(
  known: readonly string[],
  o: { required?: readonly string[]; hints?: Record<string, string>; noun?: string } = {},
): KeySet {
  return { known: new Set(known), required: o.required ?? [], hints: o.hints ?? {}, noun: o.noun ?? 'key' };
}

/**
 * Throws a 400 `unknown_key` for the first key of `obj` not in `keys`, and `missing_key` for a
 * required key that is absent; `at` names the object, e.g. `items[3]` or `the body`.
 */
export function checkKeys(obj: Readonly<Record<string, unknown>>, keys: KeySet, at: string): void {
  for (const key in obj) {
    if (!keys.known.has(key)) {
      const nearest = nearestKey(key, keys);
      const hint = nearest ? `did you mean \`${nearest}\`?` : `the known ${keys.noun}s are ${[...keys.known].join(', ')}.`;
      throw badRequest(keys.noun === 'key' ? 'unknown_key' : 'unknown_parameter', `unknown ${keys.noun} \`${key}\` in ${at}: ${hint}`);
    }
  }
  for (const key of keys.required) {
    if (obj[key] === undefined) throw badRequest('missing_key', `\`${key}\` is required in ${at}`);
  }
}

/** The hint for `key`, else the known key within a small edit distance (case ignored), if any. */
export function nearestKey(key: string, keys: KeySet): string | undefined {
  if (Object.hasOwn(keys.hints, key)) return keys.hints[key];
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of keys.known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Infinity;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}
