// Request bodies on the Node server, read from the socket's chunks rather than through a web
// Request (lib/http/requests/body.ts): the same text, the same limits.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { readConfig } from '../../lib/config.js';
import { EventEmitter } from 'node:events';
import { buildApp } from '../../lib/http/app.js';
import { readText } from '../../lib/http/requests/body.js';
import { serveNode, type NodeServer } from '../../lib/http/runtime/node.js';
import { useDatabase } from '../support/db.js';

const db = useDatabase();
let server: NodeServer;

beforeAll(async () => {
  const app = buildApp(allFunctions, { config: readConfig({ QUEEN_MAX_BODY_BYTES: '4096' }, { auth: 'none' }), database: () => db() });
  server = await serveNode(app, 0, '127.0.0.1');
});
afterAll(() => server.close(0));

// Sends `parts` as separate chunks, without Content-Length (chunked), so the body arrives in pieces.
function postChunked(path: string, parts: (string | Uint8Array)[]): Promise<{ status: number; body: any }> {
  const url = new URL(server.url + path);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: url.port, path, method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    (async () => {
      for (const p of parts) {
        req.write(p);
        await new Promise((r) => setTimeout(r, 5));
      }
      req.end();
    })();
  });
}

describe('a request body on the Node server', () => {
  it('is decoded whole when it arrives in chunks that split a multi-byte character', async () => {
    const body = new TextEncoder().encode(JSON.stringify({ items: [{ queue: 'node-body', payload: { name: 'Zoë 🐝' } }] }));
    const cut = body.indexOf(0xf0) + 2; // inside the bee's four bytes
    const pushed = await postChunked('/api/v1/push', [body.subarray(0, cut), body.subarray(cut)]);
    expect(pushed.status).toBe(201);
    const popped = await fetch(`${server.url}/api/v1/pop/queue/node-body`).then((r) => r.json() as Promise<any>);
    expect(popped.messages[0].data).toEqual({ name: 'Zoë 🐝' });
  });

  it('over the limit without a Content-Length is refused with 413 body_too_large, and nothing is written', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ queue: 'node-body-big', payload: 'x'.repeat(60) + i }));
    const text = JSON.stringify({ items });
    expect(text.length).toBeGreaterThan(4096);
    const res = await postChunked('/api/v1/push', [text.slice(0, 2000), text.slice(2000)]);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('body_too_large');
    const [row] = await db().query<{ n: string }>(`SELECT count(*) AS n FROM queen.queues WHERE name = 'node-body-big'`);
    expect(Number(row!.n)).toBe(0);
  });

  it('that is not JSON answers 400 invalid_json as through any other runtime', async () => {
    const res = await postChunked('/api/v1/push', ['{"items": [', 'oops']);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
  });
});

describe('readText', () => {
  it("reads the Node IncomingMessage in env.incoming and never builds the web Request's body", async () => {
    const incoming = Object.assign(new EventEmitter(), { readableEnded: false });
    const c = {
      env: { incoming },
      get: () => ({ maxBodyBytes: 100 }),
      req: { header: () => undefined, text: () => Promise.reject(new Error('c.req.text() was called')) },
    };
    const text = readText(c as any);
    incoming.emit('data', new TextEncoder().encode('{"a":'));
    incoming.emit('data', new TextEncoder().encode('1}'));
    incoming.emit('end');
    expect(await text).toBe('{"a":1}');
  });
});
