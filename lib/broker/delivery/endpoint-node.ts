// The delivery request on Node: node:http(s) with a `lookup` that checks every address a name
// resolves to, so the socket connects only to an address that passed the rules (DNS rebinding).
// Built-in, so no HTTP client joins the bundles (undici's Agent with a connect lookup would do the
// same as one more dependency). Keep-alive agents: a busy subscription reuses checked connections.
// node: modules load lazily: the Worker bundle holds this file but never runs it.
import type { LookupAddress } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { blockedAddress } from './address.js';
import { MAX_ANSWER_BYTES, joinChunks, type DeliveryRequest, type RawAnswer } from './transport.js';

class NotAllowed extends Error {
  readonly code = 'URL_NOT_ALLOWED';
}

function checkAll(host: string, addresses: LookupAddress[]): void {
  for (const a of addresses) {
    const why = blockedAddress(a.address);
    if (why) throw new NotAllowed(`${host} resolves to ${a.address}, a ${why} address`);
  }
}

const modules = Promise.all([import('node:dns'), import('node:http'), import('node:https')]).then(([dns, http, https]) => {
  const checkedLookup: LookupFunction = (host, options, callback) => {
    dns.lookup(host, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      try {
        checkAll(host, addresses);
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, '', 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const agents = {
    checked: {
      'http:': new http.Agent({ keepAlive: true, lookup: checkedLookup }),
      'https:': new https.Agent({ keepAlive: true, lookup: checkedLookup }),
    },
    open: { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) },
  };
  return { dns, request: { 'http:': http.request, 'https:': https.request }, agents };
});

/** Every address of a name; throws (code URL_NOT_ALLOWED) when one is not a public unicast address. */
export async function resolveChecked(host: string): Promise<LookupAddress[]> {
  const { dns } = await modules;
  const addresses = await dns.promises.lookup(host, { all: true });
  checkAll(host, addresses);
  return addresses;
}

export async function postNode(url: string, init: DeliveryRequest): Promise<RawAnswer> {
  const { request, agents } = await modules;
  const u = new URL(url);
  const protocol = u.protocol as 'http:' | 'https:';
  const send = request[protocol];
  const agent = agents[init.allowPrivate ? 'open' : 'checked'][protocol];
  const body = Buffer.from(init.body);
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = send(
      u,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', ...init.headers, 'content-length': String(body.length) },
        signal: AbortSignal.timeout(init.timeoutMs),
      },
      (res: IncomingMessage) => {
        const chunks: Uint8Array[] = [];
        let size = 0;
        const done = (truncated: boolean) => {
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
            body: joinChunks(chunks, size),
            truncated,
          });
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            // Not worth reading on: the socket goes rather than drain an unbounded body.
            res.removeAllListeners('data');
            res.destroy();
            done(true);
          }
        });
        res.on('end', () => done(false));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
