// The client: push, pop, ack and lease extension over the HTTP API (docs/api.md), with the retry
// policy of http.ts; consume, transactions and the admin routes build on these.
import { Admin } from './admin.js';
import { consume, type ConsumeOptions, type Handler } from './consume.js';
import { AckError, QueenError } from './errors.js';
import { request, type RequestOptions, type Transport } from './http.js';
import { Transaction } from './transaction.js';
import { ackItem, messagesOf, pushItems, type Ackable, type PushInput } from './items.js';
import type { AckItem, AckResult, AckStatus, LeaseExtendResult, PopResponse, PushResult } from './wire.js';

export type { Ackable, PushInput };

export interface QueenOptions {
  /** The deployment's base URL, e.g. `https://d1234abcd.cloudfront.net` or `http://localhost:6632`. */
  url: string;
  /** A JWT (`npx queen-serverless token`); none when auth is off. */
  token?: string;
  /** A fetch to use instead of the global one (a Worker's service binding, a test double). */
  fetch?: typeof fetch;
  /** Per-request deadline, ms; a long-poll adds its own wait. Default 30000. */
  timeoutMs?: number;
  /** How often a 503, a 429 or a network error is retried. Default 3. */
  retries?: number;
}

export interface PopOptions {
  /** Consumer group; none is queue mode. */
  group?: string;
  batch?: number;
  /** Long-poll: hold the request until a message arrives or `timeoutMs` passes. */
  wait?: boolean;
  /** The long-poll deadline, ms (the server caps it). Default 20000. */
  timeoutMs?: number;
  partition?: string;
  autoAck?: boolean;
  subscriptionMode?: 'all' | 'new';
  subscriptionFrom?: string;
  signal?: AbortSignal;
}

const enc = encodeURIComponent;

export class Queen {
  readonly admin: Admin;
  private readonly transport: Transport;

  constructor(options: QueenOptions) {
    this.transport = {
      url: options.url.replace(/\/+$/, ''),
      token: options.token,
      fetch: options.fetch ?? ((...args) => globalThis.fetch(...args)),
      timeoutMs: options.timeoutMs ?? 30_000,
      retries: options.retries ?? 3,
    };
    this.admin = new Admin(this);
  }

  /** A request with the client's auth and retry policy; the typed methods are built on it. */
  request<T>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<T | null> {
    return request<T>(this.transport, method, path, body, options);
  }

  /** Pushes to one queue; one result per item, in order, `queued` or `duplicate`. */
  async push<T>(queue: string, items: readonly PushInput<T>[]): Promise<PushResult[]> {
    return (await this.request<PushResult[]>('POST', '/api/v1/push', { items: pushItems(queue, items) }))!;
  }

  /** Leases up to `batch` messages of one partition; null when there is nothing to deliver. */
  async pop<T = unknown>(queue: string, options: PopOptions = {}): Promise<PopResponse<T> | null> {
    const { group, batch, wait, timeoutMs = 20_000, partition, autoAck, subscriptionMode, subscriptionFrom, signal } = options;
    const query = new URLSearchParams();
    if (batch !== undefined) query.set('batch', String(batch));
    if (wait) {
      query.set('wait', 'true');
      query.set('timeout', String(timeoutMs));
    }
    if (group !== undefined) query.set('consumerGroup', group);
    if (autoAck) query.set('autoAck', 'true');
    if (subscriptionMode) query.set('subscriptionMode', subscriptionMode);
    if (subscriptionFrom) query.set('subscriptionFrom', subscriptionFrom);
    const path = `/api/v1/pop/queue/${enc(queue)}${partition !== undefined ? `/partition/${enc(partition)}` : ''}?${query}`;
    return this.request<PopResponse<T>>('GET', path, undefined, { signal, holdMs: wait ? timeoutMs : 0 });
  }

  /** Acks messages with one status; throws AckError when the server refuses any item. */
  ack(target: Ackable, status: AckStatus = 'completed', options: { error?: string } = {}): Promise<AckResult[]> {
    return this.ackItems(messagesOf(target).map((m) => ackItem(m, status, options.error)));
  }

  /** Sends prepared ack items in one call (consume mixes statuses); throws AckError on any refusal. */
  async ackItems(items: AckItem[]): Promise<AckResult[]> {
    if (items.length === 0) return [];
    const results = (await this.request<AckResult[]>('POST', '/api/v1/ack/batch', { acknowledgments: items }))!;
    if (results.some((r) => !r.success)) throw new AckError(results);
    return results;
  }

  /** Pushes a lease's expiry to at least now + `seconds`; throws `lease_lost` when it is gone. */
  async extendLease(lease: string | PopResponse<unknown>, seconds?: number): Promise<LeaseExtendResult> {
    const leaseId = typeof lease === 'string' ? lease : lease.leaseId;
    const body = seconds === undefined ? {} : { seconds: Math.max(1, Math.ceil(seconds)) };
    const [result] = (await this.request<LeaseExtendResult[]>('POST', `/api/v1/lease/${enc(leaseId)}/extend`, body))!;
    if (!result?.success) throw new QueenError(200, 'lease_lost', `lease ${leaseId}: ${result?.error ?? 'not extended'}`, null, result);
    return result;
  }

  /** Runs `handler` on every message until `signal` aborts (docs/clients.md#consume). */
  consume<T = unknown>(queue: string, handler: Handler<T>, options: ConsumeOptions = {}): Promise<void> {
    return consume(this, queue, handler, options);
  }

  /** Pushes and acks that commit together or not at all. */
  transaction(): Transaction {
    return new Transaction(this);
  }
}
