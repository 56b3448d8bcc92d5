// The delivery request (docs/delivery.md#the-request): the body with each payload spliced in
// verbatim, signed over exactly the bytes sent (Standard Webhooks), and the queen-* headers.
import type { Config } from '../../config.js';
import type { ClaimedMessage } from '../claims.js';
import { deliveryAnswer, deliveryMessage, messageArray } from '../message-view.js';
import type { DeliveryBatch } from './claim.js';
import { signatureHeader } from './signature.js';
import { endpointHeaders, signingSecrets } from './subscriptions.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** A name as a header value: as it is when printable ASCII, else percent-encoded UTF-8 (as in a URL). */
export const headerName = (name: string): string => (PRINTABLE_ASCII.test(name) ? name : encodeURIComponent(name));

export function deliveryBody(batch: DeliveryBatch, messages: readonly ClaimedMessage[]): string {
  const { queue, partition, partitionId } = batch.range;
  const parts = messages.map((m) => deliveryMessage(m, { messageId: m.id }));
  const { subscriptionId: subscription, group: consumerGroup, attempt } = batch;
  return deliveryAnswer({ subscription, queue, partition, partitionId, consumerGroup, attempt, messages: messageArray(parts) });
}

/** Headers and body of one attempt; `nowSec` is this attempt's webhook-timestamp. */
export async function deliveryRequest(config: Config, batch: DeliveryBatch, messages: readonly ClaimedMessage[], nowSec: number) {
  const body = deliveryBody(batch, messages);
  const secrets = await signingSecrets(config, {
    secret: batch.secret,
    previous_secret: batch.previousSecret,
    previous_secret_until: batch.previousSecretUntil,
  });
  const headers: Record<string, string> = {
    ...(await endpointHeaders(config, batch.sealedHeaders)),
    'content-type': 'application/json',
    'webhook-id': batch.webhookId,
    'webhook-timestamp': String(nowSec),
    'webhook-signature': await signatureHeader(secrets, batch.webhookId, nowSec, body),
    'queen-subscription': batch.subscriptionId,
    'queen-queue': headerName(batch.range.queue),
    'queen-partition': headerName(batch.range.partition),
    'queen-partition-id': batch.range.partitionId,
    'queen-attempt': String(batch.attempt),
    'queen-max-attempts': String(batch.maxAttempts),
  };
  return { headers, body };
}
