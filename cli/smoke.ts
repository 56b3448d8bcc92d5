// `queen-serverless smoke <base-url>`: the calls a deployment must answer, in order, on a queue of
// its own that is deleted at the end: health, configure, push, pop, ack, a failed ack into the DLQ,
// the DLQ listing, retry, and the retried message consumed.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Env } from '../lib/config.js';
import { CliError } from './errors.js';
import { mintToken } from './token.js';

export const SMOKE_USAGE = `queen-serverless smoke <base-url> [--token T]
  Runs push, pop, ack and a DLQ round trip against a deployment. The token needs the admin role;
  without --token it uses QUEEN_TOKEN, or mints a 10-minute admin token from JWT_SECRET, or sends none.`;

interface Reply {
  status: number;
  body: any;
}

interface Message {
  transactionId: string;
  partitionId: string;
  data: unknown;
}

export async function smokeCommand(args: string[], env: Env, print: (line: string) => void = console.log): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { token: { type: 'string' } } });
  const [base, extra] = positionals;
  if (!base || extra !== undefined) throw new CliError('smoke takes one base URL, e.g. smoke https://d1234abcd.cloudfront.net');
  if (!/^https?:\/\//.test(base)) throw new CliError(`the base URL must start with http:// or https://, got "${base}"`);
  const { token, source } = await chooseToken(values.token, env);
  print(`smoke test of ${base} (auth: ${source})`);

  const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(new URL(path, base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: a proxy's error page; kept as text for the report
    }
    return { status: res.status, body: parsed };
  };
  const queue = `smoke-${randomUUID()}`;
  const path = encodeURIComponent(queue);
  let failed = false;
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    try {
      const result = await run();
      print(`ok    ${name} (${Date.now() - started} ms)`);
      return result;
    } catch (err) {
      failed = true;
      print(`FAIL  ${name}: ${(err as Error).message}`);
      throw err;
    }
  };
  const expect = (reply: Reply, status: number, what: string) => {
    if (reply.status !== status)
      throw new Error(`${what}: expected HTTP ${status}, got ${reply.status} ${JSON.stringify(reply.body).slice(0, 400)}`);
    return reply.body;
  };
  const popOne = async (): Promise<{ leaseId: string; message: Message }> => {
    const body = expect(await call('GET', `/api/v1/pop/queue/${path}?batch=1&wait=true&timeout=5000`), 200, 'pop');
    return { leaseId: body.leaseId, message: body.messages[0] };
  };
  const ack = async (m: Message, leaseId: string, status: 'completed' | 'failed') => {
    const [result] = expect(
      await call('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, leaseId, status }),
      200,
      'ack',
    );
    if (!result?.success) throw new Error(`ack ${status} was refused: ${JSON.stringify(result)}`);
    return result as { dlq: boolean };
  };

  let created = false;
  try {
    await step('GET /health', async () => {
      const body = expect(await call('GET', '/health'), 200, 'health');
      if (body.status !== 'healthy') throw new Error(`health says ${JSON.stringify(body)}`);
    });
    await step(`configure ${queue} with retryLimit 0`, async () => {
      expect(await call('POST', '/api/v1/configure', { queue, options: { retryLimit: 0 } }), 200, 'configure');
      created = true;
    });
    await step('push two messages', async () => {
      const items = ['first', 'second'].map((n) => ({ queue, transactionId: `${queue}-${n}`, payload: { smoke: n } }));
      const results = expect(await call('POST', '/api/v1/push', { items }), 201, 'push') as { status: string }[];
      if (results.some((r) => r.status !== 'queued')) throw new Error(`push answered ${JSON.stringify(results)}`);
    });
    await step('pop the first and ack it completed', async () => {
      const { leaseId, message } = await popOne();
      if (message.transactionId !== `${queue}-first`) throw new Error(`popped ${message.transactionId}, expected ${queue}-first`);
      await ack(message, leaseId, 'completed');
    });
    const dead = await step('pop the second and ack it failed: it goes to the DLQ', async () => {
      const { leaseId, message } = await popOne();
      if (!(await ack(message, leaseId, 'failed')).dlq) throw new Error('the failed ack did not dead-letter the message (retryLimit 0)');
      return message;
    });
    await step('list the DLQ', async () => {
      const body = expect(await call('GET', `/api/v1/dlq?queue=${path}`), 200, 'dlq');
      if (!body.messages.some((m: Message) => m.transactionId === dead.transactionId))
        throw new Error(`the DLQ does not list ${dead.transactionId}`);
    });
    const retried = await step('retry the dead letter', async () => {
      const target = `/api/v1/messages/${encodeURIComponent(dead.partitionId)}/${encodeURIComponent(dead.transactionId)}/retry`;
      return expect(await call('POST', target, {}), 200, 'retry') as { transactionId: string };
    });
    await step('pop the retried message and ack it completed', async () => {
      const { leaseId, message } = await popOne();
      if (message.transactionId !== retried.transactionId)
        throw new Error(`popped ${message.transactionId}, expected the retry ${retried.transactionId}`);
      if (JSON.stringify(message.data) !== JSON.stringify(dead.data)) throw new Error(`the retry carries ${JSON.stringify(message.data)}`);
      await ack(message, leaseId, 'completed');
    });
    await step('the queue is empty', async () => {
      expect(await call('GET', `/api/v1/pop/queue/${path}`), 204, 'pop of an empty queue');
    });
  } catch {
    // reported by step(); the queue is still deleted below
  } finally {
    if (created) {
      await step(`delete ${queue}`, async () => {
        expect(await call('DELETE', `/api/v1/resources/queues/${path}`), 200, 'delete');
      }).catch(() => {});
    }
  }
  if (failed) throw new CliError('smoke test failed', 1);
  print('smoke test passed');
}

async function chooseToken(flag: string | undefined, env: Env): Promise<{ token?: string; source: string }> {
  if (flag) return { token: flag, source: '--token' };
  if (env.QUEEN_TOKEN) return { token: env.QUEEN_TOKEN, source: 'QUEEN_TOKEN' };
  if (env.JWT_SECRET) {
    const token = await mintToken({
      role: 'admin',
      sub: 'queen-smoke',
      expires: '10m',
      secret: env.JWT_SECRET,
      tenantClaim: env.JWT_TENANT_CLAIM || 'tenant',
      issuer: env.JWT_ISSUER || undefined,
      audience: env.JWT_AUDIENCE || undefined,
    });
    return { token, source: 'admin token minted from JWT_SECRET' };
  }
  return { source: 'none; the server must run with QUEEN_AUTH=none' };
}
