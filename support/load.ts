// Steady traffic against a running broker over real HTTP, as Queen's clients send it: producers
// with unique transactionIds that resend the same request after a failure, consumers that pop,
// ack and resend an ack that got no answer. Every answer is tallied and every outcome recorded, so
// an audit (audit.ts) can check what the log holds against what the clients were told.
import { send, type Answer } from './http.js';

/** Statuses per route family, the answers no client should ever get, and the dropped connections. */
export class Tally {
  readonly statuses = new Map<string, number>();
  /** 5xx other than 503 database_unavailable with Retry-After, or a 4xx without {error, code}. */
  readonly wrong: string[] = [];
  /** Requests with no HTTP answer at all (the server was down or the connection was cut). */
  readonly dropped: { at: number; route: string; error: string }[] = [];

  record(route: string, answer: Answer): void {
    const key = `${route} ${answer.status === 0 ? 'no-answer' : answer.status}`;
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if (answer.status === 0) {
      this.dropped.push({ at: Date.now(), route, error: answer.error ?? '' });
      return;
    }
    const problem = answerProblem(answer);
    if (problem && this.wrong.length < 50) this.wrong.push(`${route}: ${problem}`);
  }

  count(predicate: (route: string, status: string) => boolean): number {
    let n = 0;
    for (const [key, count] of this.statuses) {
      const at = key.lastIndexOf(' ');
      if (predicate(key.slice(0, at), key.slice(at + 1))) n += count;
    }
    return n;
  }

  /** `route status count` lines, sorted. */
  histogram(): string[] {
    return [...this.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`);
  }
}

/**
 * Why an answer breaks docs/semantics.md#errors-and-availability, or null: 5xx only as 503
 * database_unavailable with Retry-After.
 */
export function answerProblem(answer: Answer): string | null {
  if (answer.status < 400) return null;
  let body: { error?: unknown; code?: unknown } | null;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `${answer.status} without a JSON body: ${answer.text.slice(0, 200)}`;
  }
  if (typeof body?.error !== 'string' || typeof body?.code !== 'string')
    return `${answer.status} without {error, code}: ${answer.text.slice(0, 200)}`;
  if (answer.status < 500) return null;
  if (answer.status === 503 && body.code === 'database_unavailable' && answer.headers.get('retry-after')) return null;
  return `${answer.status} ${answer.text.slice(0, 300)}`;
}

export interface Pushed {
  txn: string;
  queue: string;
  partitionId: string;
  offset: number;
  status: string;
}

export interface Delivery {
  queue: string;
  partitionId: string;
  offset: number;
  txn: string;
  leaseId: string;
  sentAt: number;
  receivedAt: number;
}

export interface Acked {
  partitionId: string;
  offset: number;
  txn: string;
  at: number;
}

export interface LoadOptions {
  url: string;
  /** Prefix of every transactionId, unique per run. */
  run: string;
  queues: string[];
  producers: number;
  consumers: number;
  partitions: number;
  itemsPerPush?: number;
  popBatch?: number;
  /** The queues' leaseTime, for the live-lease check. */
  leaseSeconds: number;
  /** Producers pause this long between pushes; consumers after a 204. */
  pauseMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Load {
  readonly tally = new Tally();
  readonly pushed = new Map<string, Pushed>();
  readonly deliveries: Delivery[] = [];
  readonly acked: Acked[] = [];
  /** Push answers that called an item a duplicate of an earlier attempt of the same request. */
  duplicatesOnRetry = 0;
  private producing = true;
  private consuming = true;
  private readonly workers: Promise<void>[] = [];
  private readonly consumersDone: Promise<void>[] = [];

  constructor(readonly options: LoadOptions) {
    for (let p = 0; p < options.producers; p++) this.workers.push(this.produce(p));
    for (let c = 0; c < options.consumers; c++) this.consumersDone.push(this.consume(c));
  }

  /** Stops the producers once their current push is answered; consumers go on (see drain). */
  async stopProducing(): Promise<void> {
    this.producing = false;
    await Promise.all(this.workers);
  }

  async stopConsuming(): Promise<void> {
    this.consuming = false;
    await Promise.all(this.consumersDone);
  }

  /** Resends the same request while it gets no answer or a 503, as Queen's clients do. */
  private async retrying(route: string, method: string, path: string, body?: string): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      const answer = await send(this.options.url, method, path, body);
      this.tally.record(route, answer);
      if ((answer.status !== 0 && answer.status !== 503) || attempt >= 600) return answer;
      await sleep(Math.min(100 * attempt, 1000));
    }
  }

  private async produce(p: number): Promise<void> {
    const { queues, partitions, run, itemsPerPush = 3, pauseMs = 0 } = this.options;
    for (let n = 0; this.producing; n++) {
      const items = Array.from({ length: 1 + ((p + n) % itemsPerPush) }, (_, i) => ({
        queue: queues[(p + n) % queues.length]!,
        partition: `p${(n * 7 + i + p) % partitions}`,
        transactionId: `${run}-p${p}-${n}-${i}`,
        payload: { p, n, i },
      }));
      // Odd producers push through /transaction: an interactive transaction, not one statement.
      const viaTransaction = p % 2 === 1;
      const answer = viaTransaction
        ? await this.retrying('transaction', 'POST', '/api/v1/transaction', JSON.stringify({ operations: [{ type: 'push', items }] }))
        : await this.retrying('push', 'POST', '/api/v1/push', JSON.stringify({ items }));
      if (answer.status === (viaTransaction ? 200 : 201)) {
        const parsed = JSON.parse(answer.text);
        // A transaction answers one flat list of results, one per push item here.
        const results = (viaTransaction ? parsed.results : parsed) as {
          transaction_id: string;
          partition_id: string;
          offset: number;
          status: string;
        }[];
        results.forEach((r, i) => {
          if (r.status === 'duplicate') this.duplicatesOnRetry++;
          this.pushed.set(r.transaction_id, {
            txn: r.transaction_id,
            queue: items[i]!.queue,
            partitionId: r.partition_id,
            offset: r.offset,
            status: r.status,
          });
        });
      }
      if (pauseMs) await sleep(pauseMs);
    }
  }

  private async consume(c: number): Promise<void> {
    const { queues, popBatch = 10, pauseMs = 20 } = this.options;
    const queue = queues[c % queues.length]!;
    while (this.consuming) {
      const sentAt = Date.now();
      const answer = await send(this.options.url, 'GET', `/api/v1/pop/queue/${encodeURIComponent(queue)}?batch=${popBatch}`);
      this.tally.record('pop', answer);
      if (answer.status !== 200) {
        await sleep(answer.status === 204 ? pauseMs : 100);
        continue;
      }
      const receivedAt = Date.now();
      const body = JSON.parse(answer.text) as {
        messages: { transactionId: string; partitionId: string; offset: number; leaseId: string }[];
      };
      for (const m of body.messages) {
        this.deliveries.push({
          queue,
          partitionId: m.partitionId,
          offset: m.offset,
          txn: m.transactionId,
          leaseId: m.leaseId,
          sentAt,
          receivedAt,
        });
      }
      const acks = body.messages.map((m) => ({
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        leaseId: m.leaseId,
        status: 'completed',
      }));
      // Odd consumers ack through /transaction, which commits all of them or none.
      const viaTransaction = c % 2 === 1;
      const ack = viaTransaction
        ? await this.retrying(
            'transaction',
            'POST',
            '/api/v1/transaction',
            JSON.stringify({ operations: [{ type: 'ack', acknowledgments: acks }] }),
          )
        : await this.retrying('ack', 'POST', '/api/v1/ack/batch', JSON.stringify({ acknowledgments: acks }));
      if (ack.status !== 200) continue;
      const at = Date.now();
      const parsed = JSON.parse(ack.text);
      const results = (viaTransaction ? (parsed.success ? parsed.results : []) : parsed) as { success: boolean }[];
      results.forEach((r, i) => {
        const m = body.messages[i]!;
        if (r.success) this.acked.push({ partitionId: m.partitionId, offset: m.offset, txn: m.transactionId, at });
      });
    }
  }

  /** Pushes answered 201 and acks answered success so far. */
  progress(): { pushes: number; acks: number } {
    return { pushes: this.pushed.size, acks: this.acked.length };
  }
}

/** Waits until `done()` holds, polling; throws `what` after `timeoutMs`. */
export async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}
