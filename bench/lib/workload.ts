// The load every target of bench/README.md#figures is measured under: 4 HTTP clients x batch 100 over 16 partitions, ~200 B JSON payloads,
// a transactionId per item. Client c cycles over partitions c, c+4, c+8, c+12, so no two clients
// ever wait on one partition's lock.
import { drive } from './load.js';
import { popAck, push, pushBody } from './queen.js';

export const CLIENTS = 4;
export const BATCH = 100;
export const PARTITIONS = 16;

export const partitionOf = (client: number, seq: number) => `p${(client + CLIENTS * seq) % PARTITIONS}`;

/** One client's push of a batch, for drive(). */
export const pushCycle = (base: URL, queue: string) => (client: number, seq: number) =>
  push(
    base,
    pushBody(queue, () => partitionOf(client, seq), BATCH),
  );

/** One wildcard pop of a batch and its ack by transactionId, for drive(). */
export const popCycle = (base: URL, queue: string) => () => popAck(base, `/api/v1/pop/queue/${queue}?batch=${BATCH}`);

/** Pushes `messages` (rounded up to batches) into `queue` as the push phase does; returns the count. */
export async function fill(base: URL, queue: string, messages: number): Promise<number> {
  const want = Math.ceil(messages / BATCH);
  let sent = 0;
  const cycle = pushCycle(base, queue);
  await drive(CLIENTS, 1e6, async (c, seq) => (sent++ < want ? cycle(c, seq) : -1));
  return want * BATCH;
}
