// POST /api/v1/transaction (SPEC §3.5): acks and pushes in one database transaction, in order;
// the first operation that fails (an ack item answering success:false included) rolls back all.
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { ackMessages, type AckItem, type AckResult } from './ack.js';
import { pushItems, type PushItem, type PushResult } from './push.js';

export type Operation = { type: 'ack'; items: AckItem[] } | { type: 'push'; items: PushItem[] };

export interface TransactionContext {
  tenant: string;
  sub: string | null;
  config: Config;
}

export interface TransactionResponse {
  transactionId: string;
  success: boolean;
  error?: string;
  results: (AckResult[] | PushResult[])[];
}

class Rollback extends Error {}

export async function runTransaction(db: Database, ctx: TransactionContext, ops: Operation[]): Promise<TransactionResponse> {
  const transactionId = uuidv7();
  const results: (AckResult[] | PushResult[])[] = [];
  try {
    await db.transaction(async (tx) => {
      for (const [i, op] of ops.entries()) {
        if (op.type === 'push') {
          results.push(await pushItems(tx, ctx, op.items));
          continue;
        }
        const acks = await ackMessages(tx, ctx, op.items);
        results.push(acks);
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
