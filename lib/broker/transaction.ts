// POST /api/v1/transaction (docs/semantics.md#transactions): acks and pushes in one database
// transaction, in order; the first operation that fails (an ack item answering success:false
// included) rolls back all. Queen's clients put no leaseId in their ack operations and list the
// leases in requiredLeases.
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { ackMessages, type AckItem, type AckResult } from './ack.js';
import { pushItems, type PushItem, type PushResult } from './push.js';

export type Operation = { type: 'ack'; items: AckItem[] } | { type: 'push'; items: PushItem[] };

export interface TransactionRequest {
  operations: Operation[];
  /** Leases that authorise the ack operations without a leaseId of their own. */
  requiredLeases: string[];
}

export interface TransactionContext {
  tenant: string;
  sub: string | null;
  config: Config;
}

/**
 * Queen's flat shape: one entry per ack and per pushed item, numbered across the transaction, each
 * with its `type`; our ack and push result fields besides (Queen's camelCase keys added to a push's).
 */
export type TransactionResult =
  | (AckResult & { type: 'ack' })
  | (PushResult & { type: 'push'; success: true; transactionId: string; messageId: string | null; partitionId: string });

export interface TransactionResponse {
  transactionId: string;
  success: boolean;
  error?: string;
  results: TransactionResult[];
}

class Rollback extends Error {}

export async function runTransaction(db: Database, ctx: TransactionContext, req: TransactionRequest): Promise<TransactionResponse> {
  const transactionId = uuidv7();
  const results: TransactionResult[] = [];
  const ackContext = { tenant: ctx.tenant, requiredLeases: req.requiredLeases };
  const ops = req.operations;
  try {
    await db.transaction(async (tx) => {
      for (let i = 0; i < ops.length; ) {
        const op = ops[i]!;
        if (op.type === 'push') {
          for (const r of await pushItems(tx, ctx, op.items)) {
            results.push({ ...r, index: results.length, type: 'push', success: true, transactionId: r.transaction_id, messageId: r.message_id, partitionId: r.partition_id });
          }
          i++;
          continue;
        }
        // Consecutive ack operations (Queen's clients send one per message) are one batch ack: one
        // statement, and a nack among them clamps the cursor for all, so no later ack passes it.
        const { items, opOf, end } = consecutiveAcks(ops, i);
        const acks = await ackMessages(tx, ackContext, items);
        for (const a of acks) results.push({ ...a, index: results.length, type: 'ack' });
        const failed = acks.findIndex((a) => !a.success);
        if (failed >= 0) throw new Rollback(`operations[${opOf[failed]}]: ack of ${acks[failed]!.transactionId} failed: ${acks[failed]!.error}`);
        i = end;
      }
    });
  } catch (err) {
    if (err instanceof Rollback) return { transactionId, success: false, error: err.message, results };
    throw err;
  }
  return { transactionId, success: true, results };
}

/** The items of the ack operations from `start` to the next push, each with its operation's index. */
function consecutiveAcks(ops: readonly Operation[], start: number): { items: AckItem[]; opOf: number[]; end: number } {
  const items: AckItem[] = [];
  const opOf: number[] = [];
  let end = start;
  for (let op = ops[end]; op?.type === 'ack'; op = ops[++end]) {
    for (const item of op.items) {
      items.push(item);
      opOf.push(end);
    }
  }
  return { items, opOf, end };
}
