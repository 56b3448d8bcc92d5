// POST /api/v1/transaction (docs/semantics.md#transactions): acks and pushes in one database
// transaction, in order; the first operation that fails (an ack item answering success:false
// included) rolls back all. Queen's clients put no leaseId in their ack operations and list the
// leases in requiredLeases.
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../db/types.js';
import type { BrokerContext } from './context.js';
import { ackMessages, type AckItem, type AckResult } from './ack.js';
import { pushItems, type PushItem, type PushResult } from './push.js';

export type Operation = { type: 'ack'; items: AckItem[] } | { type: 'push'; items: PushItem[] };

export interface TransactionRequest {
  operations: Operation[];
  /** Leases that authorise the ack operations without a leaseId of their own. */
  requiredLeases: string[];
}

export type TransactionContext = BrokerContext;

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
  const ops = req.operations;
  const pushes = ops.flatMap((op) => (op.type === 'push' ? op.items : []));
  const acks = ops.flatMap((op) => (op.type === 'ack' ? op.items : []));
  let results: TransactionResult[] = [];
  try {
    await db.transaction(async (tx) => {
      // All pushes first, as one statement, then all acks as one batch: partitions are locked
      // before cursors and each set in sorted order, the one lock order (docs/locking.md#the-order),
      // whatever order the operations came in. The outcome is the same, all or nothing; a nack
      // among the acks clamps the cursor for all of them, so no later ack passes it.
      const pushed = pushes.length > 0 ? await pushItems(tx, ctx, pushes) : [];
      const acked = acks.length > 0 ? await ackMessages(tx, { tenant: ctx.tenant, requiredLeases: req.requiredLeases }, acks) : [];
      results = inOperationOrder(ops, pushed, acked);
      const failed = results.findIndex((r) => !r.success);
      if (failed >= 0) {
        const r = results[failed] as AckResult;
        const op = opOfResult(ops, failed);
        results = results.slice(0, failed + 1);
        throw new Rollback(`operations[${op}]: ack of ${r.transactionId} failed: ${r.error}`);
      }
    });
  } catch (err) {
    if (err instanceof Rollback) return { transactionId, success: false, error: err.message, results };
    throw err;
  }
  return { transactionId, success: true, results };
}

/** Queen's flat list: each operation's results in operation order, numbered across the transaction. */
function inOperationOrder(ops: readonly Operation[], pushed: PushResult[], acked: AckResult[]): TransactionResult[] {
  const out: TransactionResult[] = [];
  let p = 0;
  let a = 0;
  for (const op of ops) {
    for (let i = 0; i < op.items.length; i++) {
      if (op.type === 'push') {
        const r = pushed[p++]!;
        out.push({
          ...r,
          index: out.length,
          type: 'push',
          success: true,
          transactionId: r.transaction_id,
          messageId: r.message_id,
          partitionId: r.partition_id,
        });
      } else {
        out.push({ ...acked[a++]!, index: out.length, type: 'ack' });
      }
    }
  }
  return out;
}

/** The index of the operation that produced the result at `at`. */
function opOfResult(ops: readonly Operation[], at: number): number {
  let seen = 0;
  for (let i = 0; i < ops.length; i++) {
    seen += ops[i]!.items.length;
    if (at < seen) return i;
  }
  return ops.length - 1;
}
