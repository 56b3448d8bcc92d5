// The one message view (docs/api.md#messages): every answer that carries stored messages renders
// them here, namely pop, the delivery request (docs/delivery.md#the-request), the DLQ listing, the
// message detail and the message browser. Each view is a stored message's own members plus the
// few its answer adds, in the order Queen's clients and dashboard receive them
// (test/messages/views.test.ts pins those bytes). Payloads leave as the JSON text the producer sent
// (docs/semantics.md#names-and-limits), decrypted when stored encrypted, and are spliced in
// verbatim: never parsed and re-serialised, which keeps pop's answer cheap.
import { bytesToUuid } from '../codec/frame.js';
import type { DecodedMessage } from '../codec/segment.js';
import type { Config } from '../config.js';
import { decryptPayload, requireEncryptionKey } from './encryption.js';

/** A stored message's own members, whichever view carries them. */
export interface StoredMessage {
  /** The message id as a uuid string. */
  id: string;
  transactionId: string;
  traceId: string | null;
  producerSub: string | null;
  /** Its segment's creation time (the push's). */
  createdAt: Date;
  offset: number;
}

/** Where a message lives, as views name it. */
export interface MessagePlace {
  partitionId: string;
  partition: string;
  queue: string;
}

/** The members a decoded frame gives every view; `createdAt` is its segment's. */
export function storedMessage(m: DecodedMessage, createdAt: Date): StoredMessage {
  return {
    id: bytesToUuid(m.messageId),
    transactionId: m.transactionId,
    traceId: m.traceId ? bytesToUuid(m.traceId) : null,
    producerSub: m.producerSub,
    createdAt,
    offset: m.offset,
  };
}

const decoder = new TextDecoder();

/** The payload's JSON text as pushed, decrypted when stored encrypted (a missing key is a 500 that says so). */
export async function payloadText(payload: Uint8Array, encrypted: boolean, config: Pick<Config, 'encryptionKey'>, queue: string) {
  const plain = encrypted ? await decryptPayload(await requireEncryptionKey(config, queue), payload) : payload;
  return decoder.decode(plain);
}

// How each member of the base renders: uuids need no escaping, the payload is spliced as it is.
const BASE: { readonly [K in keyof Base]: (m: Base) => string } = {
  id: (m) => `"${m.id}"`,
  transactionId: (m) => JSON.stringify(m.transactionId),
  traceId: (m) => (m.traceId ? `"${m.traceId}"` : 'null'),
  producerSub: (m) => JSON.stringify(m.producerSub),
  createdAt: (m) => `"${m.createdAt.toISOString()}"`,
  offset: (m) => String(m.offset),
  data: (m) => m.data,
};

// Additions whose value is JSON text already: the detail's `payload` alias and an answer's
// rendered messages. Every other addition is a plain value, serialised as JSON.stringify would.
const SPLICED = new Set(['payload', 'messages']);

type Member<A> = { name: string; base: ((m: Base) => string) | null; key: keyof A; spliced: boolean };

/** One view's renderer. Its additions are rendered once per object: pop passes one object for all of a claim's messages. */
function renderer<A>(members: readonly Member<A>[]) {
  let last: A | undefined;
  let rendered: (string | undefined)[] = [];
  return (message: Base | null, additions: A): string => {
    if (additions !== last) {
      rendered = members.map(({ base, key, spliced }) => {
        if (base) return undefined;
        const value = additions[key];
        return value === undefined ? undefined : spliced ? (value as string) : JSON.stringify(value);
      });
      last = additions;
    }
    let out = '';
    for (let i = 0; i < members.length; i++) {
      const { name, base } = members[i]!;
      const text = base ? base(message!) : rendered[i];
      if (text === undefined) continue;
      out += (out ? ',' : '{') + name + text;
    }
    return out ? `${out}}` : '{}';
  };
}

const membersOf = <A>(keys: readonly string[], withBase: boolean): Member<A>[] =>
  keys.map((key) => ({
    name: `"${key}":`,
    base: withBase && key in BASE ? BASE[key as keyof Base] : null,
    key: key as keyof A,
    spliced: SPLICED.has(key),
  }));

// The list must name every member, so a member added to StoredMessage fails to compile until each view places it.
type Complete<Key, K extends readonly unknown[]> = [Exclude<Key, K[number]>] extends [never] ? unknown : never;

/**
 * A message view: its members in wire order, each from the stored message B (rendered by BASE) or
 * from the view's additions A (undefined left out, as JSON.stringify does). Additions are not
 * changed after they are rendered.
 */
function view<B extends Partial<Base>, A>() {
  return <const K extends readonly ((keyof B | keyof A) & string)[]>(keys: K & Complete<keyof B | keyof A, K>) => {
    const render = renderer(membersOf<A>(keys, true));
    return (message: B, additions: A): string => render(message as unknown as Base, additions);
  };
}

/** An answer's envelope around rendered messages: plain members in wire order. */
function answer<A>() {
  return <const K extends readonly (keyof A & string)[]>(keys: K & Complete<keyof A, K>) => {
    const render = renderer(membersOf<A>(keys, false));
    return (values: A): string => render(null, values);
  };
}

/** The payload's JSON text, spliced in as `data`. */
type Base = StoredMessage & { data: string };

/** A popped message: the base, where it lives, and the lease that holds it. */
export type PopAdditions = MessagePlace & { leaseId: string; consumerGroup: string; attempt: number };
export const popMessage = view<Base, PopAdditions>()([
  'id',
  'transactionId',
  'traceId',
  'data',
  'producerSub',
  'createdAt',
  'partitionId',
  'partition',
  'queue',
  'leaseId',
  'consumerGroup',
  'offset',
  'attempt',
]);
type PopEnvelope = MessagePlace & { success: true; leaseId: string; consumerGroup: string; partitionsClaimed: number; messages: string };
export const popAnswer = answer<PopEnvelope>()([
  'success',
  'queue',
  'partition',
  'partitionId',
  'leaseId',
  'consumerGroup',
  'partitionsClaimed',
  'messages',
]);

/** A delivered message: the base, its id named messageId (the place is the request's). */
export const deliveryMessage = view<Omit<Base, 'id'>, { messageId: string }>()([
  'offset',
  'transactionId',
  'messageId',
  'createdAt',
  'traceId',
  'producerSub',
  'data',
]);
type DeliveryEnvelope = MessagePlace & { subscription: string; consumerGroup: string; attempt: number; messages: string };
export const deliveryAnswer = answer<DeliveryEnvelope>()([
  'subscription',
  'queue',
  'partition',
  'partitionId',
  'consumerGroup',
  'attempt',
  'messages',
]);

/** A dead letter: the base, the group that dead-lettered it, and why and when. */
export type DeadLetterAdditions = MessagePlace & { consumerGroup: string; errorMessage: string | null; retryCount: number; failedAt: Date };
export const deadLetterMessage = view<Base, DeadLetterAdditions>()([
  'data',
  'id',
  'transactionId',
  'partitionId',
  'queue',
  'partition',
  'consumerGroup',
  'offset',
  'errorMessage',
  'retryCount',
  'traceId',
  'producerSub',
  'createdAt',
  'failedAt',
]);
type DeadLetterEnvelope = { messages: string; total: number; pagination: { limit: number; offset: number } };
export const deadLetterAnswer = answer<DeadLetterEnvelope>()(['messages', 'total', 'pagination']);

/** How the message detail and the browser place a message: its queue's names and its status (message-status.ts). */
type ListedPlace = MessagePlace & {
  queuePath: string;
  namespace: string | null;
  task: string | null;
  status: string;
  leaseExpiresAt: string | null;
};

/** The message detail: the base with the payload twice (Queen's `payload` alias), its status in every group, its DLQ error. */
type DetailAdditions = ListedPlace & {
  payload: string;
  isEncrypted: boolean;
  errorMessage: string | null;
  retryCount: number | null;
  queueConfig: unknown;
  mode: unknown;
  consumerGroups: unknown;
};
export const messageDetail = view<Base, DetailAdditions>()([
  'data',
  'payload',
  'id',
  'transactionId',
  'traceId',
  'producerSub',
  'createdAt',
  'isEncrypted',
  'partitionId',
  'queuePath',
  'partition',
  'queue',
  'namespace',
  'task',
  'offset',
  'status',
  'errorMessage',
  'retryCount',
  'leaseExpiresAt',
  'queueConfig',
  'mode',
  'consumerGroups',
]);

/** The message browser: the base without a payload, with its status and its queue's priority. */
type BrowserAdditions = ListedPlace & { queueStatus: string; busStatus: unknown; queuePriority: number };
export const browsedMessage = view<StoredMessage, BrowserAdditions>()([
  'id',
  'transactionId',
  'partitionId',
  'queuePath',
  'queue',
  'partition',
  'namespace',
  'task',
  'status',
  'queueStatus',
  'busStatus',
  'leaseExpiresAt',
  'traceId',
  'producerSub',
  'queuePriority',
  'createdAt',
  'offset',
]);
export const browserAnswer = answer<{ messages: string; mode: unknown }>()(['messages', 'mode']);

/** Rendered messages as the JSON array an answer's `messages` splices in. */
export const messageArray = (parts: readonly string[]): string => `[${parts.join(',')}]`;
