// Our signatures checked by the reference Standard Webhooks library, not by our own code.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from '../../lib/broker/delivery/signature.js';

const secretA = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
const secretB = `whsec_${Buffer.from('b'.repeat(32)).toString('base64')}`;
const body = JSON.stringify({ subscription: 's', messages: [{ offset: 1, data: { text: 'héllo 🌍' } }] });

async function headers(secrets: string[], id = 'msg_0123abc', ts = Math.floor(Date.now() / 1000)) {
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': await signatureHeader(secrets, id, ts, body) };
}

describe('Standard Webhooks signatures', () => {
  it('are accepted by the standardwebhooks library, which returns the parsed body', async () => {
    expect(new Webhook(secretA).verify(body, await headers([secretA]))).toEqual(JSON.parse(body));
  });

  it("match the library's own signature byte for byte", async () => {
    const ts = 1_700_000_000;
    expect(await signatureHeader([secretA], 'msg_x', ts, body)).toBe(new Webhook(secretA).sign('msg_x', new Date(ts * 1000), body));
  });

  it('carry one v1 signature per secret, so an endpoint with either secret accepts a request during a rotation', async () => {
    const h = await headers([secretA, secretB]);
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    expect(new Webhook(secretA).verify(body, h)).toBeTruthy();
    expect(new Webhook(secretB).verify(body, h)).toBeTruthy();
  });

  it('are refused for another secret, a changed body, id or timestamp', async () => {
    const h = await headers([secretA]);
    const other = `whsec_${Buffer.from('c'.repeat(32)).toString('base64')}`;
    expect(() => new Webhook(other).verify(body, h)).toThrow(/No matching signature/);
    expect(() => new Webhook(secretA).verify(body.replace('héllo', 'hello'), h)).toThrow(/No matching signature/);
    expect(() => new Webhook(secretA).verify(body, { ...h, 'webhook-id': 'msg_other' })).toThrow(/No matching signature/);
    expect(() => new Webhook(secretA).verify(body, { ...h, 'webhook-timestamp': String(Number(h['webhook-timestamp']) + 1) })).toThrow(
      /No matching signature/,
    );
  });

  it('take a secret without its whsec_ prefix as the libraries do', async () => {
    const bare = secretA.slice('whsec_'.length);
    expect(await signatureHeader([bare], 'msg_1', 1, body)).toBe(await signatureHeader([secretA], 'msg_1', 1, body));
  });
});
