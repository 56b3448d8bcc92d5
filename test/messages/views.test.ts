// The exact bytes of every message view Queen's clients and dashboard read: pop, the DLQ listing,
// the message detail (from the log and from a DLQ copy), the message browser and the delivery
// request body, through the real routes and dispatcher. Ids and times are replaced by
// placeholders (<uN> numbers each distinct uuid in order of appearance), so member order, values
// and the payload's own bytes are all pinned.
import { afterAll, describe, expect, it } from 'vitest';
import { runDelivery } from '../../lib/broker/delivery/dispatch.js';
import { testClient } from '../support/client.js';
import { useDatabase } from '../support/db.js';
import { config, receiver, subscribe, type Receiver } from '../delivery/helpers.js';

const db = useDatabase();
const KEY = 'cd'.repeat(32);
const api = testClient(db, { as: { sub: 'alice' }, config: { encryptionKey: KEY } });
const TRACE = '0193a5b2-7c4e-7000-8000-0123456789ab';
// Spacing, member order, a trailing zero and an escape a parse/stringify round trip would change.
const PAYLOAD = '{ "z": 1.50,  "a": ["\\u00e9", null] }';

function normalise(text: string): string {
  const ids = new Map<string, string>();
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (u) => {
      if (!ids.has(u)) ids.set(u, `<u${ids.size + 1}>`);
      return ids.get(u)!;
    })
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<t>');
}

const contentTypes = new Map<string, string | null>();

async function text(method: string, path: string, body?: string) {
  const res = await api.call(method, path, body);
  expect(res.status, res.text).toBeLessThan(300);
  contentTypes.set(`${method} ${path.replace(/\?.*/, '').replace(/\/\d+\/.*$/, '/:id')}`, res.headers.get('content-type'));
  return res.text;
}

const pushBody = (queue: string, partition: string) =>
  `{"items":[{"queue":"${queue}","partition":"${partition}","payload":${PAYLOAD},"transactionId":"t-1","traceId":"${TRACE}"},` +
  `{"queue":"${queue}","partition":"${partition}","payload":"two","transactionId":"t-2"}]}`;

let open: Receiver | undefined;
afterAll(() => open?.close());

describe('the message views', () => {
  it('pop, DLQ, detail and browser answer the same bytes as before the views were shared', async () => {
    await api.configure('mv.q', { leaseTime: 600 });
    await api.configure('mv.sealed', { encryptionEnabled: true });
    await text('POST', '/api/v1/push', pushBody('mv.q', 'p'));
    await text('POST', '/api/v1/push', pushBody('mv.sealed', 'p'));

    const pop = await text('GET', '/api/v1/pop/queue/mv.q/partition/p?batch=2&consumerGroup=g');
    const popped = JSON.parse(pop);
    const [first] = popped.messages;
    const pid = first.partitionId;
    const ack = { transactionId: 't-1', partitionId: pid, leaseId: popped.leaseId, status: 'dlq', consumerGroup: 'g', error: 'bad "x"' };
    await text('POST', '/api/v1/ack', JSON.stringify(ack));
    const qpop = await text('GET', '/api/v1/pop/queue/mv.q/partition/p?batch=1');
    const sealedPop = JSON.parse(await text('GET', '/api/v1/pop/queue/mv.sealed?batch=1'));
    const spid = sealedPop.messages[0].partitionId;

    const views = {
      pop,
      queueModePop: qpop,
      dlq: await text('GET', '/api/v1/dlq?queue=mv.q'),
      detail: await text('GET', `/api/v1/messages/${pid}/t-1`),
      pendingDetail: await text('GET', `/api/v1/messages/${pid}/t-2`),
      sealedDetail: await text('GET', `/api/v1/messages/${spid}/t-1`),
      browser: await text('GET', '/api/v1/messages?queue=mv.q'),
    };
    await db().query('DELETE FROM queen.log_segments WHERE partition_id = $1', [pid]);
    const fromDlqCopy = await text('GET', `/api/v1/messages/${pid}/t-1`);

    const normalised = Object.fromEntries(Object.entries(views).map(([k, v]) => [k, normalise(v)]));
    expect(normalised).toEqual(GOLDEN);
    // Once retention deleted the segment, the DLQ copy answers the same bytes.
    expect(normalise(fromDlqCopy)).toBe(GOLDEN.detail);
    expect(Object.fromEntries(contentTypes)).toEqual({
      'POST /api/v1/push': 'application/json',
      'POST /api/v1/ack': 'application/json',
      'GET /api/v1/pop/queue/mv.q/partition/p': 'application/json; charset=UTF-8',
      'GET /api/v1/pop/queue/mv.sealed': 'application/json; charset=UTF-8',
      'GET /api/v1/dlq': 'application/json; charset=UTF-8',
      'GET /api/v1/messages/:id': 'application/json; charset=UTF-8',
      'GET /api/v1/messages': 'application/json',
    });
  });

  it('the delivery request body carries the same bytes as before', async () => {
    const subs = new Map<string, string>();
    open = await receiver(subs);
    const sub = await subscribe(db(), 'mv.hook', 'hook', open.url);
    subs.set(sub.id, sub.secret);
    await text('POST', '/api/v1/push', pushBody('mv.hook', 'p'));
    expect(await runDelivery(db(), config, { deadline: Date.now() + 10_000 })).toMatchObject({ delivered: 2 });
    expect(normalise(open.arrivals[0]!.raw)).toBe(GOLDEN_DELIVERY);
  });
});

// The answers before the views were shared, normalised; line breaks and indentation are not part of them.
const wire = (s: TemplateStringsArray) => s.raw.join('').replace(/\n */g, '');

const GOLDEN = {
  pop: wire`{"success":true,"queue":"mv.q","partition":"p","partitionId":"1","leaseId":"<u1>","consumerGroup":"g",
    "partitionsClaimed":1,"messages":[{"id":"<u2>","transactionId":"t-1","traceId":"<u3>","data":{ "z": 1.50,  "a": [
    "\u00e9", null] },"producerSub":"alice","createdAt":"<t>","partitionId":"1","partition":"p","queue":"mv.q",
    "leaseId":"<u1>","consumerGroup":"g","offset":0,"attempt":1},{"id":"<u4>","transactionId":"t-2","traceId":null,
    "data":"two","producerSub":"alice","createdAt":"<t>","partitionId":"1","partition":"p","queue":"mv.q","leaseId":"<u1>",
    "consumerGroup":"g","offset":1,"attempt":1}]}`,
  queueModePop: wire`{"success":true,"queue":"mv.q","partition":"p","partitionId":"1","leaseId":"<u1>","consumerGroup":"__QUEUE_MODE__",
    "partitionsClaimed":1,"messages":[{"id":"<u2>","transactionId":"t-1","traceId":"<u3>","data":{ "z": 1.50,  "a": [
    "\u00e9", null] },"producerSub":"alice","createdAt":"<t>","partitionId":"1","partition":"p","queue":"mv.q",
    "leaseId":"<u1>","consumerGroup":"__QUEUE_MODE__","offset":0,"attempt":1}]}`,
  dlq: wire`{"messages":[{"data":{ "z": 1.50,  "a": ["\u00e9", null] },"id":"<u1>","transactionId":"t-1","partitionId":"1",
    "queue":"mv.q","partition":"p","consumerGroup":"g","offset":0,"errorMessage":"bad \"x\"","retryCount":0,
    "traceId":"<u2>","producerSub":"alice","createdAt":"<t>","failedAt":"<t>"}],"total":1,"pagination":{"limit":100,
    "offset":0}}`,
  detail: wire`{"data":{ "z": 1.50,  "a": ["\u00e9", null] },"payload":{ "z": 1.50,  "a": ["\u00e9", null] },"id":"<u1>",
    "transactionId":"t-1","traceId":"<u2>","producerSub":"alice","createdAt":"<t>","isEncrypted":false,"partitionId":"1",
    "queuePath":"mv.q/p","partition":"p","queue":"mv.q","namespace":"mv","task":"q","offset":0,"status":"dead_letter",
    "errorMessage":"bad \"x\"","retryCount":0,"leaseExpiresAt":null,"queueConfig":{"ttl":0,"priority":0,"leaseTime":600,
    "retryDelay":0,"retryLimit":3},"mode":{"hasQueueMode":true,"busGroupsCount":1,"consumedByGroups":1,"type":"hybrid"},
    "consumerGroups":[{"name":"__QUEUE_MODE__","consumed":false,"leaseExpiresAt":"<t>","consumerGroup":"__QUEUE_MODE__",
    "status":"leased","committed":-1},{"name":"g","consumed":false,"leaseExpiresAt":null,"consumerGroup":"g",
    "status":"dead_letter","committed":0}]}`,
  pendingDetail: wire`{"data":"two","payload":"two","id":"<u1>","transactionId":"t-2","traceId":null,"producerSub":"alice",
    "createdAt":"<t>",
    "isEncrypted":false,"partitionId":"1","queuePath":"mv.q/p","partition":"p","queue":"mv.q","namespace":"mv","task":"q",
    "offset":1,"status":"pending","errorMessage":null,"retryCount":null,"leaseExpiresAt":null,"queueConfig":{"ttl":0,
    "priority":0,"leaseTime":600,"retryDelay":0,"retryLimit":3},"mode":{"hasQueueMode":true,"busGroupsCount":1,
    "consumedByGroups":0,"type":"hybrid"},"consumerGroups":[{"name":"__QUEUE_MODE__","consumed":false,"leaseExpiresAt":null,
    "consumerGroup":"__QUEUE_MODE__","status":"pending","committed":-1},{"name":"g","consumed":false,"leaseExpiresAt":null,
    "consumerGroup":"g","status":"pending","committed":0}]}`,
  sealedDetail: wire`{"data":{ "z": 1.50,  "a": ["\u00e9", null] },"payload":{ "z": 1.50,  "a": ["\u00e9", null] },"id":"<u1>",
    "transactionId":"t-1","traceId":"<u2>","producerSub":"alice","createdAt":"<t>","isEncrypted":true,"partitionId":"2",
    "queuePath":"mv.sealed/p","partition":"p","queue":"mv.sealed","namespace":"mv","task":"sealed","offset":0,
    "status":"processing","errorMessage":null,"retryCount":null,"leaseExpiresAt":"<t>","queueConfig":{"ttl":0,"priority":0,
    "leaseTime":300,"retryDelay":0,"retryLimit":3},"mode":{"hasQueueMode":true,"busGroupsCount":0,"consumedByGroups":0,
    "type":"queue"},"consumerGroups":[{"name":"__QUEUE_MODE__","consumed":false,"leaseExpiresAt":"<t>",
    "consumerGroup":"__QUEUE_MODE__","status":"leased","committed":-1}]}`,
  browser: wire`{"messages":[{"id":"<u1>","transactionId":"t-2","partitionId":"1","queuePath":"mv.q/p","queue":"mv.q","partition":"p",
    "namespace":"mv","task":"q","status":"pending","queueStatus":"pending","busStatus":{"consumedBy":0,"totalGroups":1},
    "leaseExpiresAt":null,"traceId":null,"producerSub":"alice","queuePriority":0,"createdAt":"<t>","offset":1},{"id":"<u2>",
    "transactionId":"t-1","partitionId":"1","queuePath":"mv.q/p","queue":"mv.q","partition":"p","namespace":"mv","task":"q",
    "status":"dead_letter","queueStatus":"dead_letter","busStatus":{"consumedBy":1,"totalGroups":1},"leaseExpiresAt":null,
    "traceId":"<u3>","producerSub":"alice","queuePriority":0,"createdAt":"<t>","offset":0}],"mode":{"hasQueueMode":true,
    "busGroupsCount":1,"type":"hybrid"}}`,
};

const GOLDEN_DELIVERY = wire`{"subscription":"<u1>","queue":"mv.hook","partition":"p","partitionId":"3","consumerGroup":"hook","attempt":1,
  "messages":[{"offset":0,"transactionId":"t-1","messageId":"<u2>","createdAt":"<t>","traceId":"<u3>",
  "producerSub":"alice","data":{ "z": 1.50,  "a": ["\u00e9", null] }},{"offset":1,"transactionId":"t-2",
  "messageId":"<u4>","createdAt":"<t>","traceId":null,"producerSub":"alice","data":"two"}]}`;
