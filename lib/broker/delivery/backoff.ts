// When a batch is tried again (docs/delivery.md#retries). Full jitter spreads the retries of many
// partitions that failed together, so a recovering endpoint is not knocked over again at once.

export interface RetryPolicy {
  retryBaseMs: number;
  retryMaxMs: number;
}

/** After failed attempt n (1-based): random in [0, min(retryMaxMs, retryBaseMs·2^(n-1))]. */
export function backoffMs(policy: RetryPolicy, n: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.max(0, n - 1));
  return Math.floor(random() * (ceiling + 1));
}

/** A throttle (429/503 with Retry-After): at least Retry-After and the back-off of attempt n, at most retryMaxMs. */
export function throttleMs(policy: RetryPolicy, retryAfterMs: number, n: number, random: () => number = Math.random): number {
  return Math.min(policy.retryMaxMs, Math.max(retryAfterMs, backoffMs(policy, n, random)));
}
