// The HTTP API's request and answer shapes (docs/api.md), in one module: the client is typed from
// it and the server's tests read their answers through it, so a change of shape breaks a type check.

export type AckStatus = 'completed' | 'failed' | 'retry' | 'dlq';

/** `{"error","code"}`: every non-2xx answer. */
export interface ErrorBody {
  error: string;
  code: string;
}

export interface PushItem {
  queue: string;
  partition?: string;
  payload: unknown;
  transactionId?: string;
  traceId?: string;
}

export interface PushRequest {
  items: PushItem[];
}

/** One entry of push's 201 answer, per item in input order (snake_case as Queen's wire has it). */
export interface PushResult {
  index: number;
  status: 'queued' | 'duplicate';
  transaction_id: string;
  /** A duplicate's original id; null when retention already deleted its segment. */
  message_id: string | null;
  partition_id: string;
  trace_id: string | null;
  queueName: string;
  offset: number;
}

export interface PopQuery {
  batch?: number;
  wait?: boolean;
  /** The long-poll deadline, ms. */
  timeout?: number;
  consumerGroup?: string;
  autoAck?: boolean;
  subscriptionMode?: 'all' | 'new';
  subscriptionFrom?: string;
  partitions?: number;
}

export interface Message<T = unknown> {
  id: string;
  transactionId: string;
  traceId: string | null;
  data: T;
  producerSub: string | null;
  /** ISO 8601. */
  createdAt: string;
  partitionId: string;
  partition: string;
  queue: string;
  /** "" for an autoAck pop. */
  leaseId: string;
  consumerGroup: string;
  offset: number;
  attempt: number;
}

/** Pop's 200 answer (a 204 has no body). */
export interface PopResponse<T = unknown> {
  success: true;
  queue: string;
  partition: string;
  partitionId: string;
  leaseId: string;
  consumerGroup: string;
  partitionsClaimed: number;
  messages: Message<T>[];
}

export interface AckItem {
  transactionId: string;
  partitionId: string;
  leaseId?: string | null;
  status?: AckStatus | 'success';
  consumerGroup?: string | null;
  error?: string | null;
  offset?: number | null;
}

export interface AckBatchRequest {
  consumerGroup?: string;
  acknowledgments: AckItem[];
}

/** One entry of an ack's 200 answer, per item in input order. */
export interface AckResult {
  index: number;
  transactionId: string;
  success: boolean;
  error: string | null;
  queueName: string | null;
  partitionName: string | null;
  leaseReleased: boolean;
  dlq: boolean;
  /** Dead-lettering was asked for on a queue without a DLQ: skipped past. */
  skipped?: true;
  /** False: accepted, but clamped below a failed or retried message, so redelivered. */
  committed: boolean;
  /** The offset was at or below the cursor already: a retried ack, a no-op success. */
  alreadyCommitted?: true;
  offset: number | null;
}

export interface LeaseExtendResult {
  index: number;
  leaseId: string;
  success: boolean;
  error: string | null;
  expiresAt: string | null;
}

export type TransactionOperation = { type: 'push'; items: PushItem[] } | ({ type: 'ack' } & AckBatchRequest);

export interface TransactionRequest {
  operations: TransactionOperation[];
  requiredLeases?: string[];
}

export type TransactionResult =
  | (AckResult & { type: 'ack' })
  | (PushResult & { type: 'push'; success: true; transactionId: string; messageId: string | null; partitionId: string });

export interface TransactionResponse {
  transactionId?: string;
  success: boolean;
  error?: string;
  results: TransactionResult[];
}

export interface QueueOptions {
  leaseTime: number;
  retryLimit: number;
  retryDelay: number;
  deadLetterQueue: boolean;
  dlqAfterMaxRetries: boolean;
  delayedProcessing: number;
  windowBuffer: number;
  retentionEnabled: boolean;
  retentionSeconds: number;
  completedRetentionSeconds: number;
  dedupWindowSeconds: number;
  encryptionEnabled: boolean;
  priority: number;
  maxSize: number;
  ttl: number;
  maxWaitTimeSeconds: number;
}

export interface ConfigureRequest {
  queue: string;
  namespace?: string;
  task?: string;
  options?: Partial<QueueOptions>;
}

export interface ConfigureResponse {
  configured: true;
  queueId: string;
  queue: string;
  namespace: string | null;
  task: string | null;
  storage: 'segments';
  options: QueueOptions;
  warnings: string[];
}

export interface DlqQuery {
  queue?: string;
  consumerGroup?: string;
  partition?: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

export interface DlqMessage<T = unknown> {
  id: string;
  transactionId: string;
  partitionId: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  offset: number;
  errorMessage: string | null;
  retryCount: number;
  data: T;
  traceId: string | null;
  producerSub: string | null;
  createdAt: string;
  failedAt: string;
}

export interface DlqListResponse<T = unknown> {
  messages: DlqMessage<T>[];
  total: number;
  pagination: { limit: number; offset: number };
}

export interface DlqRetryResponse {
  success: true;
  transactionId: string;
  messageId: string;
  offset: number;
}

export interface RedriveRequest {
  queue: string;
  partition?: string;
  consumerGroup?: string;
  from?: string;
  to?: string;
  limit?: number;
}

/** POST /api/v1/dlq/redrive's answer: how many messages went back, in how many chunks, and what is left. */
export interface RedriveResponse {
  success: true;
  queue: string;
  redriven: number;
  removed: number;
  chunks: number;
  remaining: number;
}

export interface SubscriptionOptions {
  batchSize: number;
  maxInFlight: number;
  timeoutMs: number;
  rateLimit: number;
  retryBaseMs: number;
  retryMaxMs: number;
  subscriptionMode: 'all' | 'new';
  disableAfterMs: number;
}

/** What a create or an update sends: header values go in and are never shown again. */
export interface SubscriptionOptionsInput extends Partial<SubscriptionOptions> {
  headers?: Record<string, string>;
}

export interface SubscriptionCreateRequest {
  queue: string;
  name: string;
  url: string;
  consumerGroup?: string;
  options?: SubscriptionOptionsInput;
}

/** A subscription as every route shows it: the extra headers by name only, never a secret. */
export interface Subscription {
  id: string;
  queue: string;
  name: string;
  consumerGroup: string;
  url: string;
  state: 'active' | 'paused';
  /** `endpoint_gone`, `endpoint_failing` or `paused_by_user` while paused. */
  pausedReason: string | null;
  options: SubscriptionOptions & { headers: string[] };
  failingSince: string | null;
  previousSecretValidUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The create answer: the only time besides rotation that the secret is shown. */
export interface SubscriptionCreated extends Subscription {
  secret: string;
}

/** One entry of GET /api/v1/subscriptions. */
export interface SubscriptionListed extends Subscription {
  lag: number;
  inFlight: number;
  lastAttempt: SubscriptionAttempt | null;
}

export interface SubscriptionPartition {
  partitionId: string;
  partition: string;
  lag: number;
  inFlight: number;
  /** When a batch that failed or was throttled goes again; null when it is due now. */
  nextAttemptAt: string | null;
}

/** GET /api/v1/subscriptions/:id. */
export interface SubscriptionDetail extends SubscriptionListed {
  delivered: number;
  failedAttempts: number;
  deadLettered: number;
  lastAttemptAt: string | null;
  partitions: SubscriptionPartition[];
  attempts: SubscriptionAttempt[];
}

export interface SubscriptionUpdateRequest {
  url?: string;
  options?: Omit<SubscriptionOptionsInput, 'subscriptionMode'>;
  state?: 'active' | 'paused';
}

export interface SecretRotated {
  id: string;
  secret: string;
  previousSecretValidUntil: string;
}

/** One request of the delivery log, newest first. */
export interface SubscriptionAttempt {
  id: number;
  at: string;
  partitionId: string;
  partition: string | null;
  fromOffset: number;
  toOffset: number;
  webhookId: string;
  attempt: number;
  outcome: 'delivered' | 'failed' | 'throttled' | 'gone' | 'dead_lettered';
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** The first 1 KiB of the answer's body. */
  response: string | null;
}

/** The body the delivery function POSTs to a subscription's URL. */
export interface DeliveryBody<T = unknown> {
  subscription: string;
  queue: string;
  partition: string;
  partitionId: string;
  consumerGroup: string;
  attempt: number;
  messages: DeliveryMessage<T>[];
}

export interface DeliveryMessage<T = unknown> {
  offset: number;
  transactionId: string;
  messageId: string;
  createdAt: string;
  traceId: string | null;
  producerSub: string | null;
  data: T;
}

/** An endpoint's per-message outcome; messages its answer does not name are completed. */
export type DeliveryAck = ({ offset: number } | { transactionId: string }) & { status: AckStatus; error?: string };

export interface DeliveryAnswer {
  acks?: DeliveryAck[];
}
