// Wire items from what the caller holds: push items with a transactionId filled in, ack items
// from the messages a pop returned.
import { uuidv7 } from './uuid.js';
import type { AckItem, AckStatus, Message, PopResponse, PushItem } from './wire.js';

export interface PushInput<T = unknown> {
  data: T;
  partition?: string;
  /** Idempotency key; the client fills in a UUIDv7 when absent, so a retried push stores nothing twice. */
  transactionId?: string;
  traceId?: string;
}

/** What ack accepts: a pop's answer, some of its messages, or one. */
export type Ackable = PopResponse<unknown> | Message<unknown> | readonly Message<unknown>[];

export const messagesOf = (target: Ackable): readonly Message<unknown>[] =>
  Array.isArray(target) ? target : 'messages' in (target as PopResponse) ? (target as PopResponse).messages : [target as Message];

/** The wire ack of one message; the offset spares the server a hash lookup. */
export function ackItem(m: Message<unknown>, status: AckStatus, error?: string | null): AckItem {
  const item: AckItem = {
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    leaseId: m.leaseId,
    consumerGroup: m.consumerGroup,
    offset: m.offset,
    status,
  };
  // The server refuses U+0000 in text.
  if (error) item.error = error.replace(/\u0000/g, '').slice(0, 4000);
  return item;
}

export const pushItems = <T>(queue: string, items: readonly PushInput<T>[]): PushItem[] =>
  items.map(({ data, partition, transactionId, traceId }) => ({
    queue,
    payload: data,
    transactionId: transactionId ?? uuidv7(),
    ...(partition !== undefined ? { partition } : {}),
    ...(traceId !== undefined ? { traceId } : {}),
  }));
