// The admin routes a program calls: queue configuration, the DLQ and push-delivery subscriptions
// (docs/api.md). They need an `admin` token when auth is on.
import type { Queen } from './queen.js';
import type {
  ConfigureRequest,
  ConfigureResponse,
  DlqListResponse,
  DlqQuery,
  DlqRetryResponse,
  RedriveRequest,
  RedriveResponse,
  SecretRotated,
  Subscription,
  SubscriptionAttempt,
  SubscriptionDetail,
  SubscriptionListed,
  SubscriptionCreated,
  SubscriptionCreateRequest,
  SubscriptionUpdateRequest,
} from './wire.js';

const enc = encodeURIComponent;
const query = (q: object) => {
  const s = new URLSearchParams(Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]]))).toString();
  return s ? `?${s}` : '';
};

/** A dead letter's address: what `dlq.list` returns carries both. */
export interface DlqAddress {
  partitionId: string;
  transactionId: string;
}

export class Admin {
  constructor(private readonly queen: Queen) {}

  private call<T>(method: string, path: string, body?: unknown, resend = true): Promise<T> {
    return this.queen.request<T>(method, `/api/v1${path}`, body, { resend }) as Promise<T>;
  }

  configure(request: ConfigureRequest): Promise<ConfigureResponse> {
    return this.call('POST', '/configure', request);
  }

  readonly dlq = {
    list: <T = unknown>(q: DlqQuery = {}): Promise<DlqListResponse<T>> => this.call('GET', `/dlq${query(q)}`),
    /** Re-pushes one dead letter under a fresh transactionId; not resent after a lost answer (it would 404). */
    retry: (m: DlqAddress, options: { consumerGroup?: string } = {}): Promise<DlqRetryResponse> =>
      this.call('POST', `/messages/${enc(m.partitionId)}/${enc(m.transactionId)}/retry`, options, false),
    delete: (m: DlqAddress, options: { consumerGroup?: string } = {}): Promise<unknown> =>
      this.call('DELETE', `/messages/${enc(m.partitionId)}/${enc(m.transactionId)}${query(options)}`),
    redrive: (request: RedriveRequest): Promise<RedriveResponse> => this.call('POST', '/dlq/redrive', request),
  };

  readonly subscriptions = {
    /** The answer holds the signing secret: the only time it is shown. */
    create: (request: SubscriptionCreateRequest): Promise<SubscriptionCreated> => this.call('POST', '/subscriptions', request, false),
    list: async (q: { queue?: string } = {}): Promise<SubscriptionListed[]> =>
      (await this.call<{ subscriptions: SubscriptionListed[] }>('GET', `/subscriptions${query(q)}`)).subscriptions,
    get: (id: string): Promise<SubscriptionDetail> => this.call('GET', `/subscriptions/${enc(id)}`),
    update: (id: string, patch: SubscriptionUpdateRequest): Promise<Subscription> => this.call('PATCH', `/subscriptions/${enc(id)}`, patch),
    /** Stops deliveries; the consumer group's cursors stay (deleting the group is its own route). */
    delete: (id: string): Promise<{ success: true; id: string; deleted: true }> => this.call('DELETE', `/subscriptions/${enc(id)}`),
    /** For 24 h both secrets sign every delivery: give verifyDelivery both. */
    rotateSecret: (id: string): Promise<SecretRotated> => this.call('POST', `/subscriptions/${enc(id)}/rotate-secret`, undefined, false),
    attempts: async (
      id: string,
      q: { limit?: number; /** an attempt's id: the page before it */ before?: number } = {},
    ): Promise<SubscriptionAttempt[]> =>
      (await this.call<{ attempts: SubscriptionAttempt[] }>('GET', `/subscriptions/${enc(id)}/attempts${query(q)}`)).attempts,
  };
}
