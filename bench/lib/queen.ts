// The wire calls a Queen client makes (clients/client-js: every item carries its own
// transactionId, a UUID; acks name transactionId + partitionId + leaseId), over node:http.
import { randomUUID } from 'node:crypto';
import { call } from '../../support/http.js';
import { payloadOf } from './payload.js';

let sequence = 0;

/** A push body of `count` items for one partition, or one partition per item with `partitionOf`. */
export function pushBody(queue: string, partitionOf: (i: number) => string, count: number): string {
  const items = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    items[i] = `{"queue":"${queue}","partition":"${partitionOf(i)}","payload":${payloadOf(sequence++)},"transactionId":"${randomUUID()}"}`;
  }
  return `{"items":[${items.join(',')}]}`;
}

/** Pushes and checks that every item was queued; returns the count. */
export async function push(base: URL, body: string): Promise<number> {
  const reply = await call(base, 'POST', '/api/v1/push', body, [201]);
  const results = JSON.parse(reply.text) as { status: string }[];
  const queued = results.filter((r) => r.status === 'queued').length;
  if (queued !== results.length) throw new Error(`push: ${results.length - queued} of ${results.length} items were not queued`);
  return queued;
}

export interface Popped {
  partition: string;
  leaseId: string;
  messages: { transactionId: string; partitionId: string; offset?: number }[];
}

// BENCH_ACK_OFFSETS=1: acks echo the offsets pop returned, as queen-serverless-client's consume does.
const ACK_OFFSETS = process.env.BENCH_ACK_OFFSETS === '1';

export async function pop(base: URL, path: string): Promise<Popped | null> {
  const reply = await call(base, 'GET', path, undefined, [200, 204]);
  return reply.status === 204 ? null : (JSON.parse(reply.text) as Popped);
}

export async function ack(base: URL, popped: Popped): Promise<void> {
  const acknowledgments = popped.messages.map((m) => ({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    status: 'completed',
    error: null,
    leaseId: popped.leaseId,
    ...(ACK_OFFSETS ? { offset: m.offset } : {}),
  }));
  const reply = await call(base, 'POST', '/api/v1/ack/batch', JSON.stringify({ acknowledgments, consumerGroup: null }), [200]);
  const results = JSON.parse(reply.text) as { success: boolean; error: string | null }[];
  const failed = results.find((r) => !r.success);
  if (failed) throw new Error(`ack failed: ${failed.error}`);
}

/** One pop + ack of everything popped; returns how many messages (0 for a 204). */
export async function popAck(base: URL, path: string): Promise<number> {
  const popped = await pop(base, path);
  if (!popped) return 0;
  await ack(base, popped);
  return popped.messages.length;
}
