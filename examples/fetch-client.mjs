// Calling queen-serverless with nothing but fetch: runs on Node 20+, in a Cloudflare Worker, Deno
// and browsers. Copy the queenClient function into your code; there is nothing to install.
//   node examples/fetch-client.mjs http://localhost:6632          (QUEEN_TOKEN=… when auth is on)

/** A minimal client: push, pop (with long-poll) and ack, errors thrown with the server's code. */
export function queenClient(baseUrl, { token, fetch: send = globalThis.fetch } = {}) {
  async function call(method, path, body) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await send(new URL(path, baseUrl), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 204) return null;
    const data = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${data.code}: ${data.error}`);
    return data;
  }
  return {
    /** Pushes payloads to one queue (and partition); returns one result per item. */
    push: (queue, payloads, { partition } = {}) => call('POST', '/api/v1/push', { items: payloads.map((payload) => ({ queue, partition, payload })) }),
    /** Leases up to `batch` messages; with `wait`, holds the request until one arrives or `timeout` ms pass. null when there is nothing. */
    pop(queue, { batch = 1, wait = false, timeout = 20_000, consumerGroup } = {}) {
      const query = new URLSearchParams({ batch: String(batch), wait: String(wait), timeout: String(timeout) });
      if (consumerGroup) query.set('consumerGroup', consumerGroup);
      return call('GET', `/api/v1/pop/queue/${encodeURIComponent(queue)}?${query}`);
    },
    /**
     * Acks every message of a pop's answer: completed, or failed (retried, then dead-lettered).
     * A refused item is a 200 with success: false (e.g. the lease expired): thrown, never returned.
     */
    async ack(popped, status = 'completed', consumerGroup) {
      const results = await call('POST', '/api/v1/ack/batch', {
        consumerGroup,
        acknowledgments: popped.messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: popped.leaseId, status })),
      });
      const refused = results.find((r) => !r.success);
      if (refused) throw new Error(`ack of ${refused.transactionId} refused: ${refused.error}`);
      return results;
    },
  };
}

/** Pushes three orders, consumes them and acks them; returns what a reader would want to see. */
export async function demo(client, queue = `fetch-demo-${Date.now()}`) {
  const pushed = await client.push(queue, [{ order: 1 }, { order: 2 }, { order: 3 }]);
  const popped = await client.pop(queue, { batch: 10 });
  const acked = await client.ack(popped);
  const after = await client.pop(queue);
  return {
    pushed: pushed.map((r) => r.status),
    popped: popped.messages.map((m) => m.data),
    acked: acked.every((r) => r.success),
    empty: after === null,
  };
}

if (typeof process !== 'undefined' && import.meta.url === new URL(process.argv[1] ?? '', 'file://').href) {
  const base = process.argv[2] ?? 'http://localhost:6632';
  const result = await demo(queenClient(base, { token: process.env.QUEEN_TOKEN }));
  console.log(`pushed: ${result.pushed.join(', ')}`);
  console.log(`popped: ${JSON.stringify(result.popped)}`);
  console.log(`acked: ${result.acked}`);
  console.log(`queue empty afterwards: ${result.empty}`);
}
