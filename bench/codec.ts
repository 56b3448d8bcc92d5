// Codec throughput against peers in one run: zstd-wasm vs fzstd on whole segments, with and
// without the content checksum, our pure-TS XXH64 and XXH3-128 vs hash-wasm's (reusing one
// hasher). Run by hand: npx tsx bench/codec.ts
import { decompress as decompressJs } from 'fzstd';
import { createXXHash128, createXXHash64 } from 'hash-wasm';
import { packFrames, type Frame } from '../lib/codec/frame.js';
import { DEFAULT_ZSTD_LEVEL, decodeSegment, decompressSegment, encodeSegment } from '../lib/codec/segment.js';
import { hashTransactionIds, xxh3_128 } from '../lib/codec/xxh3.js';
import { xxh64Low32 } from '../lib/codec/xxh64.js';
import { ensureZstd, getZstd } from '../lib/codec/zstd.js';
import { addContentChecksum } from '../lib/codec/zstd-frame.js';

const SEGMENT_SIZES = [100, 1000];
const ROUND_MS = 300;
const ROUNDS = 7;
const TXN_IDS = 10_000;

// Deterministic content so every run measures the same kind of bytes.
let state = 0x9e3779b9;
function random(): number {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 0x100000000;
}
function pick<T>(xs: readonly T[]): T {
  return xs[Math.floor(random() * xs.length)]!;
}
function word(min: number, max: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let n = min + Math.floor(random() * (max - min + 1)); n > 0; n--) s += alphabet[Math.floor(random() * 36)];
  return s;
}
function hex(bytes: number): string {
  let s = '';
  for (let i = 0; i < bytes; i++)
    s += Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0');
  return s;
}

// An order event of about 880 bytes: fixed keys and enums, random ids, amounts and timestamps.
function makeEvent(i: number): string {
  return JSON.stringify({
    eventId: `${hex(4)}-${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}`,
    type: pick(['order.created', 'order.paid', 'order.shipped', 'order.refunded']),
    version: 3,
    occurredAt: new Date(1_750_000_000_000 + i * 137).toISOString(),
    tenant: `tenant-${Math.floor(random() * 20)}`,
    customer: {
      id: `cus_${word(14, 14)}`,
      name: `${pick(['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Ken'])} ${pick(['Lovelace', 'Hopper', 'Turing', 'Liskov'])}`,
      email: `${word(5, 10)}@${pick(['example.com', 'mail.test', 'corp.local'])}`,
      address: {
        street: `${Math.floor(random() * 999)} ${pick(['Via Roma', 'Hauptstrasse', 'Main Street', 'Rue de la Paix'])}`,
        city: pick(['Milan', 'Berlin', 'Austin', 'Lyon']),
        zip: String(10000 + Math.floor(random() * 89999)),
        country: pick(['IT', 'DE', 'US', 'FR']),
      },
    },
    items: Array.from({ length: 3 }, () => ({
      sku: `SKU-${word(8, 8).toUpperCase()}`,
      name: pick(['Espresso cup', 'Moka pot 6', 'Grinder burr set', 'Milk jug 350ml']),
      qty: 1 + Math.floor(random() * 4),
      unitPrice: Math.round(random() * 20000) / 100,
      currency: 'EUR',
    })),
    payment: { method: pick(['card', 'sepa', 'paypal']), last4: String(1000 + Math.floor(random() * 9000)), status: 'captured' },
    shipping: { carrier: pick(['DHL', 'UPS', 'GLS']), service: 'standard', trackingNumber: word(18, 18).toUpperCase() },
    metadata: {
      userAgent: `Mozilla/5.0 (${pick(['X11; Linux x86_64', 'Macintosh; Intel Mac OS X 14_5', 'Windows NT 10.0; Win64; x64'])})`,
      ip: `10.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}.${Math.floor(random() * 255)}`,
      requestId: hex(12),
    },
  });
}

function makeFrames(n: number): Frame[] {
  const enc = new TextEncoder();
  return Array.from({ length: n }, (_, i) => ({
    messageId: crypto.getRandomValues(new Uint8Array(16)),
    traceId: null,
    transactionId: `tx-${word(16, 32)}`,
    producerSub: null,
    encrypted: false,
    payload: enc.encode(makeEvent(i)),
  }));
}

// Runs the contenders in alternating rounds of about ROUND_MS, so load from other processes
// hits them alike, and returns each one's median operations per second.
function measure(...fns: Array<() => unknown>): number[] {
  for (const fn of fns) for (let w = 0; w < 20; w++) fn();
  const rates = fns.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    fns.forEach((fn, k) => {
      let ops = 0;
      const start = performance.now();
      while (performance.now() - start < ROUND_MS) {
        fn();
        ops++;
      }
      rates[k]!.push(ops / ((performance.now() - start) / 1000));
    });
  }
  return rates.map((r) => r.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!);
}

const mbps = (bytes: number, opsPerSec: number) => `${((bytes * opsPerSec) / 1e6).toFixed(0).padStart(4)} MB/s`;

await ensureZstd();
const zstd = getZstd()!;
const level = DEFAULT_ZSTD_LEVEL;

console.log(`config: node ${process.version} ${process.platform}/${process.arch}, zstd level ${level}`);
console.log('  @bokuweb/zstd-wasm 0.0.27, fzstd 0.1.1, hash-wasm 4.13 createXXHash64/128 (one hasher reused)');
console.log('  "bare" = the library call on a frame without checksum (the format before the checksum);');
console.log('  "checked" = what encodeSegment / decompressSegment do now (add / verify the XXH64 checksum)');
console.log(`  median of ${ROUNDS} alternating rounds x ${ROUND_MS} ms; MB = 10^6 bytes of packed (uncompressed) segment`);

const xxh64 = await createXXHash64(0, 0);
for (const n of SEGMENT_SIZES) {
  const frames = makeFrames(n);
  const packed = packFrames(frames);
  const bare = zstd.compress(packed, level);
  const blob = await encodeSegment(frames, level);
  const avg = frames.reduce((s, f) => s + f.payload.length, 0) / n;
  const perMessage = frames.reduce((s, f) => s + zstd.compress(packFrames([f]), level).length, 0);
  const [compress, compressChecked, wasm, wasmChecked, js, jsChecked, decodeAll, ours64, peer64] = measure(
    () => zstd.compress(packed, level),
    () => addContentChecksum(zstd.compress(packed, level), packed),
    () => zstd.decompress(bare),
    () => decompressSegment(blob, 'zstd-wasm'),
    () => decompressJs(bare),
    () => decompressSegment(blob, 'fzstd'),
    () => decodeSegment(blob, 0, 0, n - 1, n),
    () => xxh64Low32(packed),
    () => {
      xxh64.init();
      xxh64.update(packed);
      return xxh64.digest('binary');
    },
  ) as [number, number, number, number, number, number, number, number, number];
  const cost = (before: number, after: number) => `${(((before - after) / before) * 100).toFixed(0).padStart(3)}% slower`;
  console.log('');
  console.log(`segment of ${n} JSON events, payload avg ${avg.toFixed(0)} B: packed ${packed.length} B -> ${blob.length} B`);
  console.log(
    `  ratio ${(packed.length / blob.length).toFixed(2)}x (one zstd frame per message instead: ${(packed.length / perMessage).toFixed(2)}x)`,
  );
  console.log(`  compress   zstd-wasm L${level} bare     ${mbps(packed.length, compress)}`);
  console.log(`  compress   zstd-wasm L${level} checked  ${mbps(packed.length, compressChecked)}   ${cost(compress, compressChecked)}`);
  console.log(`  decompress zstd-wasm bare        ${mbps(packed.length, wasm)}`);
  console.log(`  decompress zstd-wasm checked     ${mbps(packed.length, wasmChecked)}   ${cost(wasm, wasmChecked)} (libzstd verifies)`);
  console.log(`  decompress fzstd bare            ${mbps(packed.length, js)}`);
  console.log(
    `  decompress fzstd checked         ${mbps(packed.length, jsChecked)}   ${cost(js, jsChecked)} (+ our XXH64)   zstd-wasm/fzstd checked = ${(wasmChecked / jsChecked).toFixed(2)}x`,
  );
  console.log(
    `  decodeSegment, all ${String(n).padEnd(4)}          ${mbps(packed.length, decodeAll)}   ${((decodeAll * n) / 1e6).toFixed(2)}M messages/s`,
  );
  console.log(`  xxh64 ours                       ${mbps(packed.length, ours64)}   ours/hash-wasm = ${(ours64 / peer64).toFixed(2)}x`);
  console.log(`  xxh64 hash-wasm                  ${mbps(packed.length, peer64)}`);
}

// Round-tripped through JSON so the ids are flat strings, as the broker gets them from a body.
const ids: string[] = JSON.parse(JSON.stringify(Array.from({ length: TXN_IDS }, () => `txn-${word(16, 36)}`)));
const avgLen = ids.reduce((s, id) => s + id.length, 0) / ids.length;
const hasher = await createXXHash128();
const sink = new Uint8Array(16);
const [ours, batch, peer] = measure(
  () => {
    for (const id of ids) sink.set(xxh3_128(id));
  },
  () => hashTransactionIds(ids),
  () => {
    for (const id of ids) {
      hasher.init();
      hasher.update(id);
      sink.set(hasher.digest('binary'));
    }
  },
).map((rate) => rate * TXN_IDS) as [number, number, number];
const rate = (r: number) => `${(r / 1e6).toFixed(2)}M hashes/s`;
console.log('');
console.log(`xxh3-128 of ${TXN_IDS} ASCII transaction ids of 20-40 bytes (avg ${avgLen.toFixed(1)}):`);
console.log(`  ours xxh3_128            ${rate(ours)}   ours/hash-wasm = ${(ours / peer).toFixed(2)}x`);
console.log(`  ours hashTransactionIds  ${rate(batch)}   ours/hash-wasm = ${(batch / peer).toFixed(2)}x`);
console.log(`  hash-wasm                ${rate(peer)}`);
