// The consume loop (docs/clients.md#consume): `concurrency` slots, each long-polling one partition
// at a time and running its messages in order, extending the lease while they run, acking the
// batch in one call; back-off while the broker is away; a clean stop on abort.
import { QueenError } from './errors.js';
import { backoff, sleep } from './http.js';
import { ackItem } from './items.js';
import type { Queen } from './queen.js';
import type { AckItem, Message, PopResponse } from './wire.js';

export type Handler<T> = (message: Message<T>) => unknown;

export interface ConsumeOptions {
  group?: string;
  /** Messages per pop, all from one partition. Default 10. */
  batch?: number;
  /** Handlers running at once, each on its own partition. Default 1. */
  concurrency?: number;
  /** Stops popping; running handlers finish and are acked before consume resolves. */
  signal?: AbortSignal;
  /** Long-poll deadline per pop, ms. Default 20000. */
  waitMs?: number;
  partition?: string;
  subscriptionMode?: 'all' | 'new';
  /** The queue's leaseTime, s; read from the queue when not given (60, the default, if unreadable). */
  leaseTime?: number;
  /** Told of what the loop survives: a refused ack, a lost lease, a pop that failed. Default: console.error. */
  onError?: (error: unknown) => void;
}

// 4xx answers other than these mean the request itself is wrong: retrying cannot help.
const fatal = (err: unknown) =>
  err instanceof QueenError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429;

export async function consume<T>(queen: Queen, queue: string, handler: Handler<T>, options: ConsumeOptions): Promise<void> {
  const { group, batch = 10, concurrency = 1, signal, waitMs = 20_000, partition, subscriptionMode } = options;
  const onError = options.onError ?? ((err: unknown) => console.error('queen consume:', err));
  // Stops every slot: the caller's signal, or a fatal error in any slot.
  const halt = new AbortController();
  const stop = () => halt.abort(signal?.reason);
  if (signal?.aborted) return;
  signal?.addEventListener('abort', stop, { once: true });
  let failure: unknown;
  const lease = options.leaseTime ?? (await leaseTimeOf(queen, queue));

  async function run(popped: PopResponse<T>) {
    const messages = popped.messages;
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Extend at half the lease for as long as the batch runs.
    const extend = () => {
      timer = setTimeout(() => {
        queen.extendLease(popped.leaseId, lease).then(() => done || extend(), onError);
      }, lease * 500);
    };
    extend();
    let i = 0;
    let thrown: unknown;
    let threw = false;
    try {
      for (; i < messages.length && !halt.signal.aborted; i++) {
        try {
          // A synchronous handler costs no microtask per message.
          const pending = handler(messages[i]!) as PromiseLike<unknown> | undefined;
          if (typeof pending?.then === 'function') await pending;
        } catch (err) {
          thrown = err;
          threw = true;
          break;
        }
      }
    } finally {
      done = true;
      clearTimeout(timer);
    }
    const items: AckItem[] = messages.slice(0, i).map((m) => ackItem(m, 'completed'));
    // A failure charges the retry budget; an abort hands the rest back at once, uncharged.
    if (threw) items.push(ackItem(messages[i]!, 'failed', thrown instanceof Error ? thrown.message : String(thrown)));
    else if (i < messages.length) items.push(ackItem(messages[i]!, 'retry'));
    try {
      await queen.ackItems(items);
    } catch (err) {
      onError(err);
    }
  }

  async function slot() {
    for (let failures = 0; !halt.signal.aborted;) {
      let popped: PopResponse<T> | null;
      try {
        popped = await queen.pop<T>(queue, {
          group,
          batch,
          wait: true,
          timeoutMs: waitMs,
          partition,
          subscriptionMode,
          signal: halt.signal,
        });
        failures = 0;
      } catch (err) {
        if (halt.signal.aborted) return;
        if (fatal(err)) {
          failure ??= err;
          return halt.abort(err);
        }
        onError(err);
        await sleep(backoff(failures++, 500, 30_000), halt.signal).catch(() => {});
        continue;
      }
      if (popped) await run(popped);
    }
  }

  try {
    await Promise.all(Array.from({ length: concurrency }, slot));
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (failure) throw failure;
}

async function leaseTimeOf(queen: Queen, queue: string): Promise<number> {
  try {
    const described = await queen.request<{ options?: { leaseTime?: number } }>(
      'GET',
      `/api/v1/resources/queues/${encodeURIComponent(queue)}`,
    );
    return described?.options?.leaseTime ?? 60;
  } catch {
    // A queue not created yet gets the implicit default when the first pop creates it.
    return 60;
  }
}
