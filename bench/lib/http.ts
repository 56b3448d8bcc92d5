// A keep-alive HTTP client on node:http: fetch (undici) costs more CPU per request, and that CPU
// would compete with the server on a 2-core machine.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export interface Reply {
  status: number;
  text: string;
}

export function request(base: URL, method: string, path: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: base.hostname, port: base.port, path, method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Like request, but anything other than `expect` is an error carrying the body. */
export async function call(base: URL, method: string, path: string, body?: string, expect: number[] = [200, 201, 204]): Promise<Reply> {
  const reply = await request(base, method, path, body);
  if (!expect.includes(reply.status)) throw new Error(`${method} ${path} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  return reply;
}
