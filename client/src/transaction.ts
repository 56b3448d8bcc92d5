// Pushes and acks in one database transaction (docs/semantics.md#transactions). Acks carry their
// leaseId and the leases are also listed in requiredLeases, as Queen's clients send them.
import { QueenError } from './errors.js';
import { ackItem, messagesOf, pushItems, type Ackable, type PushInput } from './items.js';
import type { Queen } from './queen.js';
import type { AckStatus, TransactionOperation, TransactionResponse } from './wire.js';

export class Transaction {
  private readonly operations: TransactionOperation[] = [];
  private readonly leases = new Set<string>();

  constructor(private readonly queen: Queen) {}

  push<T>(queue: string, items: readonly PushInput<T>[]): this {
    this.operations.push({ type: 'push', items: pushItems(queue, items) });
    return this;
  }

  ack(target: Ackable, status: AckStatus = 'completed', options: { error?: string } = {}): this {
    const messages = messagesOf(target);
    for (const m of messages) if (m.leaseId) this.leases.add(m.leaseId);
    this.operations.push({ type: 'ack', acknowledgments: messages.map((m) => ackItem(m, status, options.error)) });
    return this;
  }

  /** Commits everything or nothing; a refused operation throws `transaction_failed` and writes nothing. */
  async commit(): Promise<TransactionResponse> {
    const body = { operations: this.operations, requiredLeases: [...this.leases] };
    const res = (await this.queen.request<TransactionResponse>('POST', '/api/v1/transaction', body))!;
    if (!res.success) throw new QueenError(200, 'transaction_failed', res.error ?? 'the transaction was rolled back', null, res);
    return res;
  }
}
