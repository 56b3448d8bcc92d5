// The endpoint rules (https: only, public addresses only, checked again at connect time) and the
// one HTTP request of a delivery attempt, against real HTTP servers in this process.
import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedAddress } from '../../lib/broker/delivery/address.js';
import { checkEndpointUrl, parseRetryAfter, sendDelivery } from '../../lib/broker/delivery/endpoint.js';
import { QueenError } from '../../lib/errors.js';

const refusal = async (url: string): Promise<QueenError> => {
  const err = await checkEndpointUrl(url, { allowPrivate: false }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, url).toBeInstanceOf(QueenError);
  return err as QueenError;
};

describe('checkEndpointUrl', () => {
  it.each([
    ['http://example.com/hook', /http: URLs are not allowed/],
    ['ftp://example.com/hook', /ftp: URLs are not allowed/],
    ['not a url', /not an absolute URL/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://127.8.9.10/hook', /loopback/],
    ['https://0x7f.1/hook', /loopback/],
    ['https://2130706433/hook', /loopback/],
    ['https://localhost:8443/hook', /loopback/],
    ['https://api.localhost/hook', /loopback/],
    ['https://[::1]/hook', /loopback/],
    ['https://10.1.2.3/hook', /RFC 1918/],
    ['https://172.16.0.1/hook', /RFC 1918/],
    ['https://172.31.255.255/hook', /RFC 1918/],
    ['https://192.168.1.1/hook', /RFC 1918/],
    ['https://[fd12:3456::1]/hook', /fc00::\/7/],
    ['https://[fc00::1]/hook', /fc00::\/7/],
    ['https://169.254.10.10/hook', /link-local/],
    ['https://[fe80::1]/hook', /link-local/],
    ['https://100.64.0.1/hook', /CGNAT/],
    ['https://100.127.255.254/hook', /CGNAT/],
    ['https://0.0.0.0/hook', /unspecified/],
    ['https://[::]/hook', /unspecified/],
    ['https://169.254.169.254/latest/meta-data', /cloud metadata/],
    ['https://[fd00:ec2::254]/latest/meta-data', /cloud metadata/],
    ['https://metadata.google.internal/computeMetadata/v1/', /cloud metadata/],
    ['https://METADATA.google.internal./computeMetadata/v1/', /cloud metadata/],
    ['https://[::ffff:127.0.0.1]/hook', /loopback, as IPv4 inside IPv6/],
    ['https://[::ffff:169.254.169.254]/hook', /cloud metadata, as IPv4 inside IPv6/],
    ['https://[::ffff:a9fe:a9fe]/hook', /cloud metadata, as IPv4 inside IPv6/],
    ['https://[::ffff:10.0.0.1]/hook', /RFC 1918\), as IPv4 inside IPv6/],
    ['https://[64:ff9b::7f00:1]/hook', /loopback, as IPv4 inside IPv6/],
  ])('refuses %s with 400 url_not_allowed', async (url, why) => {
    const err = await refusal(url);
    expect(err.status).toBe(400);
    expect(err.code).toBe('url_not_allowed');
    expect(err.message).toMatch(why);
    expect(err.message).toMatch(/must be https: and reach a public address.*QUEEN_DELIVERY_ALLOW_PRIVATE=1/);
  });

  it('accepts https: URLs on public addresses, and names it cannot resolve (their deliveries fail visibly)', async () => {
    for (const url of [
      'https://93.184.215.14/hook',
      'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook',
      'https://172.32.0.1/x',
      'https://100.128.0.1/x',
      'https://hooks.invalid/x',
    ]) {
      await expect(checkEndpointUrl(url, { allowPrivate: false }), url).resolves.toBeUndefined();
    }
  });

  it('refuses a name that resolves to a loopback address', async () => {
    const name = hostname();
    const { address } = await lookup(name);
    expect(blockedAddress(address), `${name} resolves to ${address} here`).toBe('loopback');
    const err = await refusal(`https://${name}/hook`);
    expect(err.message).toContain(`${name} resolves to ${address}, a loopback address`);
  });

  it('lets QUEEN_DELIVERY_ALLOW_PRIVATE take http: and loopback hosts, but still only http(s)', async () => {
    await expect(checkEndpointUrl('http://127.0.0.1:9/hook', { allowPrivate: true })).resolves.toBeUndefined();
    await expect(checkEndpointUrl(`https://${hostname()}/hook`, { allowPrivate: true })).resolves.toBeUndefined();
    await expect(checkEndpointUrl('file:///etc/passwd', { allowPrivate: true })).rejects.toThrow(/file: URLs are not allowed/);
  });
});

describe('sendDelivery', () => {
  let server: Server;
  let base: string;
  const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/ok': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"acks":[]}'),
    '/redirect': (res) => res.writeHead(302, { location: '/ok' }).end('moved'),
    '/slow': (res) => setTimeout(() => res.writeHead(200).end(), 2_000),
    '/throttle-seconds': (res) => res.writeHead(429, { 'retry-after': '7' }).end(),
    '/throttle-date': (res) => res.writeHead(503, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() }).end(),
    '/big': (res) => res.writeHead(200).end('x'.repeat(2 * 1024 * 1024)),
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        seen.push({ path: req.url!, headers: req.headers, body });
        routes[req.url!]!(res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const send = (path: string, over: Partial<Parameters<typeof sendDelivery>[1]> = {}) =>
    sendDelivery(`${base}${path}`, {
      headers: { 'webhook-id': 'msg_1', authorization: 'Bearer x' },
      body: '{"messages":[]}',
      timeoutMs: 5_000,
      allowPrivate: true,
      ...over,
    });

  it('POSTs the JSON body with its headers and hands back the status and the whole body', async () => {
    seen.length = 0;
    const a = await send('/ok');
    expect(a).toMatchObject({ status: 200, error: null, body: '{"acks":[]}', fullBody: '{"acks":[]}', retryAfterMs: null });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toBe('{"messages":[]}');
    expect(seen[0]!.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'msg_1', authorization: 'Bearer x' });
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    seen.length = 0;
    const a = await send('/redirect');
    expect(a.status).toBe(302);
    expect(seen.map((s) => s.path)).toEqual(['/redirect']);
  });

  it('gives up after timeoutMs with error "timeout"', async () => {
    const a = await send('/slow', { timeoutMs: 300 });
    expect(a).toMatchObject({ status: null, error: 'timeout' });
    expect(a.latencyMs).toBeGreaterThanOrEqual(250);
    expect(a.latencyMs).toBeLessThan(1_500);
  });

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    expect(await send('/throttle-seconds')).toMatchObject({ status: 429, retryAfterMs: 7_000 });
    const byDate = await send('/throttle-date');
    expect(byDate.status).toBe(503);
    expect(byDate.retryAfterMs).toBeGreaterThan(25_000);
    expect(byDate.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('2015-10-21T07:27:00Z'))).toBe(60_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('2016-01-01T00:00:00Z'))).toBe(0);
    for (const bad of [null, '', '-5', '1.5', 'soon']) expect(parseRetryAfter(bad), String(bad)).toBeNull();
  });

  it('keeps the first 1 KiB of a body over 1 MiB and no full body', async () => {
    const a = await send('/big');
    expect(a.status).toBe(200);
    expect(a.body).toHaveLength(1024);
    expect(a.fullBody).toBeNull();
  });

  it('says "refused" for a port nobody listens on, without throwing', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(
      await sendDelivery(`http://127.0.0.1:${port}/`, { headers: {}, body: '{}', timeoutMs: 2_000, allowPrivate: true }),
    ).toMatchObject({ status: null, error: 'refused' });
  });

  it('without QUEEN_DELIVERY_ALLOW_PRIVATE connects to no private address, even through a name that resolves to one', async () => {
    seen.length = 0;
    const port = (server.address() as AddressInfo).port;
    const literal = await sendDelivery(`https://127.0.0.1:${port}/ok`, { headers: {}, body: '{}', timeoutMs: 2_000, allowPrivate: false });
    expect(literal).toMatchObject({ status: null, error: expect.stringMatching(/^url_not_allowed: .*loopback/) });
    // The lookup at connect time is what stops it: the name passed no check before.
    const named = await sendDelivery(`https://${hostname()}:${port}/ok`, {
      headers: {},
      body: '{}',
      timeoutMs: 2_000,
      allowPrivate: false,
    });
    expect(named).toMatchObject({
      status: null,
      error: expect.stringMatching(new RegExp(`^url_not_allowed: ${hostname()} resolves to 127\\.0\\.0\\.1, a loopback address`)),
    });
    const plain = await sendDelivery(`${base}/ok`, { headers: {}, body: '{}', timeoutMs: 2_000, allowPrivate: false });
    expect(plain.error).toMatch(/^url_not_allowed: http: URLs are not allowed/);
    expect(seen).toEqual([]);
  });
});
