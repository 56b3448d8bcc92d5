// POST /api/v1/transaction (SPEC §3.5): acks and pushes in one database transaction, in order;
// the first operation that fails (an ack item answering success:false included) rolls back all.
// Queen's clients put no leaseId in their ack operations and list the leases in requiredLeases.
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
  try {
    await db.transaction(async (tx) => {
      for (const [i, op] of req.operations.entries()) {
        if (op.type === 'push') {
          for (const r of await pushItems(tx, ctx, op.items)) {
            results.push({ ...r, index: results.length, type: 'push', success: true, transactionId: r.transaction_id, messageId: r.message_id, partitionId: r.partition_id });
          }
          continue;
        }
        const acks = await ackMessages(tx, ackContext, op.items);
        for (const a of acks) results.push({ ...a, index: results.length, type: 'ack' });
        const failed = acks.find((a) => !a.success);
        if (failed) throw new Rollback(`operations[${i}]: ack of ${failed.transactionId} failed: ${failed.error}`);
      }
    });
  } catch (err) {
    if (err instanceof Rollback) return { transactionId, success: false, error: err.message, results };
    throw err;
  }
  return { transactionId, success: true, results };
}
