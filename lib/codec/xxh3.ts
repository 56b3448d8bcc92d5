// XXH3-128 with seed 0 and the default secret, as log_txns.hashes stores it
// (docs/storage.md#the-sidecar). Pure TypeScript because Workers forbid compiling WASM from bytes,
// which rules out hash-wasm.
import { XXH3_CORE } from './xxh3-core.js';
import { hashLong } from './xxh3-long.js';

const { H_HI, hashShort, R } = XXH3_CORE;

function hashBytes(b: Uint8Array, len: number): void {
  if (len <= 240) hashShort(b, len);
  else hashLong(b, len);
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(1024);

// UTF-8 into a reused buffer; ASCII, the usual transaction id, skips TextEncoder entirely.
function hashString(s: string): void {
  const n = s.length;
  if (n > 0x10000) {
    const bytes = encoder.encode(s);
    hashBytes(bytes, bytes.length);
    return;
  }
  if (n * 3 > scratch.length) scratch = new Uint8Array(n * 3);
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    scratch[i] = c;
  }
  hashBytes(scratch, i === n ? n : encoder.encodeInto(s, scratch).written);
}

function writeDigest(out: Uint8Array, o: number): void {
  for (let w = 0; w < 4; w++) {
    const v = R[H_HI + w]!;
    out[o + 4 * w] = v >>> 24;
    out[o + 4 * w + 1] = v >>> 16;
    out[o + 4 * w + 2] = v >>> 8;
    out[o + 4 * w + 3] = v;
  }
}

/** XXH3-128 (seed 0) of the UTF-8 bytes: 16 bytes, high 64 bits first, as `xxhsum -H2` prints. */
export function xxh3_128(input: string | Uint8Array): Uint8Array {
  if (typeof input === 'string') hashString(input);
  else hashBytes(input, input.length);
  const out = new Uint8Array(16);
  writeDigest(out, 0);
  return out;
}

export function xxh3_128_hex(input: string | Uint8Array): string {
  let hex = '';
  for (const byte of xxh3_128(input)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** The log_txns.hashes value: 16 bytes per transaction id, in frame order. */
export function hashTransactionIds(ids: readonly string[]): Uint8Array {
  const out = new Uint8Array(16 * ids.length);
  for (let i = 0; i < ids.length; i++) {
    hashString(ids[i]!);
    writeDigest(out, 16 * i);
  }
  return out;
}
