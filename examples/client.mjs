// queen-serverless-client in a few lines: push three orders, consume them, check the queue is empty.
// Runs as is on Node 20+, and bundled (wrangler, esbuild, vite) in a Worker, Deno, Bun or a browser.
//   node examples/client.mjs http://localhost:6632          (QUEEN_TOKEN=… when auth is on)
import { Queen } from 'queen-serverless-client';

/** Pushes three orders to a queue of its own, consumes them and returns what a reader would want to see. */
export async function demo(queen, queue = `client-demo-${Date.now()}`) {
  const pushed = await queen.push(queue, [{ data: { order: 1 } }, { data: { order: 2 } }, { data: { order: 3 } }]);
  const consumed = [];
  const stop = new AbortController();
  // Long-polls, extends the lease while a handler runs, acks completed (failed when it throws).
  await queen.consume(
    queue,
    async (message) => {
      consumed.push(message.data);
      if (consumed.length === 3) stop.abort(); // resolves once the three are acked
    },
    { batch: 10, signal: stop.signal },
  );
  return { pushed: pushed.map((r) => r.status), consumed, empty: (await queen.pop(queue)) === null };
}

if (typeof process !== 'undefined' && import.meta.url === new URL(process.argv[1] ?? '', 'file://').href) {
  const queen = new Queen({ url: process.argv[2] ?? 'http://localhost:6632', token: process.env.QUEEN_TOKEN });
  const result = await demo(queen);
  console.log(`pushed: ${result.pushed.join(', ')}`);
  console.log(`consumed: ${JSON.stringify(result.consumed)}`);
  console.log(`queue empty afterwards: ${result.empty}`);
}
