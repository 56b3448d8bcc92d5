import { decompress as fzstdDecompress } from 'fzstd';
import { createXXHash64, type IHasher } from 'hash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { CorruptSegmentError } from '../../lib/codec/errors.js';
import { packFrames, type Frame } from '../../lib/codec/frame.js';
import { decompressSegment, encodeSegment, type Decompressor } from '../../lib/codec/segment.js';
import { ensureZstd, getZstd } from '../../lib/codec/zstd.js';
import { makeRandom } from './random.js';

const decompressors: Decompressor[] = ['zstd-wasm', 'fzstd'];
const enc = new TextEncoder();

let hasher: IHasher;
beforeAll(async () => {
  await ensureZstd();
  hasher = await createXXHash64(0, 0);
});

// JSON-ish payloads with random ids, so the compressed data has literals, matches and several
// zstd blocks once the packed segment passes 128 KiB.
function makeFrames(n: number, seed: number): Frame[] {
  const random = makeRandom(seed);
  const id = (len: number) => Array.from({ length: len }, () => Math.floor(random() * 36).toString(36)).join('');
  return Array.from({ length: n }, (_, i) => ({
    messageId: Uint8Array.from({ length: 16 }, () => Math.floor(random() * 256)),
    traceId: i % 4 === 0 ? Uint8Array.from({ length: 16 }, () => Math.floor(random() * 256)) : null,
    transactionId: `tx-${id(12)}`,
    producerSub: i % 3 === 0 ? `user-${i % 11}` : null,
    encrypted: false,
    payload: enc.encode(JSON.stringify({ order: id(10), qty: i % 9, sku: `SKU-${id(8)}`, note: id(i % 40) })),
  }));
}

// XXH64 low 32 bits, from hash-wasm: an oracle independent of lib/codec.
function checksumOf(content: Uint8Array): number {
  hasher.init();
  hasher.update(content);
  return parseInt(hasher.digest('hex').slice(8), 16);
}

function trailingU32(blob: Uint8Array): number {
  const n = blob.length;
  return (blob[n - 4]! | (blob[n - 3]! << 8) | (blob[n - 2]! << 16) | (blob[n - 1]! << 24)) >>> 0;
}

type Outcome = 'corrupt' | 'intact';

// A damaged blob must throw CorruptSegmentError or decompress to exactly the original bytes: a
// few changes (unused bits in an entropy table description) decode to the same content, which
// the checksum then confirms. Anything else returned is wrong messages.
function decodeDamaged(blob: Uint8Array, packed: Uint8Array, decompressor: Decompressor, what: string): Outcome {
  let body: Uint8Array;
  try {
    body = decompressSegment(blob, decompressor);
  } catch (error) {
    expect(error, what).toBeInstanceOf(CorruptSegmentError);
    return 'corrupt';
  }
  if (!sameBytes(body, packed)) expect.fail(`${what}: decompressed to ${body.length} bytes that are not the segment`);
  return 'intact';
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function expectCorrupt(blob: Uint8Array, packed: Uint8Array, decompressor: Decompressor, what: string): void {
  expect(decodeDamaged(blob, packed, decompressor, what), what).toBe('corrupt');
}

describe('a segment blob', () => {
  it('sets Content_Checksum_flag and ends with the low 32 bits of XXH64(content), little-endian', async () => {
    for (const n of [1, 50, 3000]) {
      const frames = makeFrames(n, n);
      const packed = packFrames(frames);
      const blob = await encodeSegment(frames);
      expect(blob[4]! & 0x04, `${n} frames`).toBe(0x04);
      expect(trailingU32(blob), `${n} frames`).toBe(checksumOf(packed));
    }
  });

  it('is a standard zstd frame: fzstd and zstd-wasm both decompress it to the packed frames', async () => {
    for (const n of [1, 50, 3000]) {
      const frames = makeFrames(n, n);
      const packed = packFrames(frames);
      const blob = await encodeSegment(frames);
      expect(fzstdDecompress(blob)).toEqual(packed);
      expect(getZstd()!.decompress(blob)).toEqual(packed);
    }
  });

  it('spans several zstd blocks when the packed segment is large', async () => {
    const frames = makeFrames(3000, 3000);
    const blob = await encodeSegment(frames);
    expect(packFrames(frames).length).toBeGreaterThan(2 * 128 * 1024);
    expect(countBlocks(blob)).toBeGreaterThanOrEqual(3);
  });
});

describe('the content checksum', () => {
  let frames: Frame[];
  let blob: Uint8Array;
  let badSum: Uint8Array;
  beforeAll(async () => {
    frames = makeFrames(50, 7);
    blob = await encodeSegment(frames);
    badSum = blob.slice();
    badSum[badSum.length - 1] = badSum[badSum.length - 1]! ^ 0x01;
  });

  // decompressSegment trusts zstd-wasm to check the checksum and hashes only after fzstd.
  it('is verified by zstd-wasm on its own: it refuses a frame whose checksum is wrong', () => {
    expect(getZstd()!.decompress(blob)).toEqual(packFrames(frames));
    expect(() => getZstd()!.decompress(badSum)).toThrow();
  });

  it('is not verified by fzstd, which returns the content despite a wrong checksum', () => {
    expect(fzstdDecompress(badSum)).toEqual(packFrames(frames));
  });

  it.each(decompressors)('makes decompressSegment with %s throw CorruptSegmentError when it is wrong', (d) => {
    expect(() => decompressSegment(badSum, d)).toThrow(CorruptSegmentError);
  });

  it.each(decompressors)('is required: %s refuses a valid zstd frame without the checksum flag', (d) => {
    const bare = blob.slice(0, blob.length - 4);
    bare[4] = bare[4]! & ~0x04;
    expect(fzstdDecompress(bare)).toEqual(packFrames(frames));
    expect(() => decompressSegment(bare, d)).toThrow(/no content checksum flag/);
    expect(() => decompressSegment(bare, d)).toThrow(CorruptSegmentError);
  });

  it.each(decompressors)('is required: %s refuses a blob whose flag is set but whose checksum is cut off', (d) => {
    for (let cut = 1; cut <= 4; cut++) {
      expect(() => decompressSegment(blob.subarray(0, blob.length - cut), d)).toThrow(/truncated inside its content checksum/);
    }
  });
});

describe.each(decompressors)('damage to a segment read with %s', (decompressor) => {
  const segments = [
    { name: '~5 KB segment', frames: makeFrames(75, 5) },
    { name: '1-frame segment', frames: makeFrames(1, 1) },
    { name: 'multi-block segment', frames: makeFrames(3000, 3000) },
  ].map((s) => ({ ...s, packed: packFrames(s.frames), blob: new Uint8Array(0) as Uint8Array }));
  beforeAll(async () => {
    for (const s of segments) s.blob = await encodeSegment(s.frames);
  });

  it('never returns other bytes than the segment for any single-byte change of the small segments', () => {
    expect(segments[0]!.blob.length).toBeGreaterThan(4500);
    expect(segments[0]!.blob.length).toBeLessThan(6000);
    for (const { name, packed, blob } of segments.slice(0, 2)) {
      let intact = 0;
      let changes = 0;
      for (let i = 0; i < blob.length; i++) {
        for (const mask of [0x01, 0x80, 0xff]) {
          const bad = blob.slice();
          bad[i] = bad[i]! ^ mask;
          if (decodeDamaged(bad, packed, decompressor, `${name}: byte ${i} ^ ${mask}`) === 'intact') intact++;
          changes++;
        }
      }
      // Measured on the 5,285-byte blob: 5 (zstd-wasm) and 6 (fzstd) of 15,855 changes decode to
      // the same content; the rest throw.
      expect(intact, name).toBeLessThan(changes / 200);
    }
  });

  it('throws CorruptSegmentError for every change to the frame header or the content checksum', () => {
    for (const { name, packed, blob } of segments) {
      const headerEnd = frameHeaderSize(blob);
      for (const i of [...Array(headerEnd).keys(), ...[1, 2, 3, 4].map((k) => blob.length - k)]) {
        for (const mask of [0x01, 0x04, 0x80, 0xff]) {
          const bad = blob.slice();
          bad[i] = bad[i]! ^ mask;
          expectCorrupt(bad, packed, decompressor, `${name}: byte ${i} ^ ${mask}`);
        }
      }
    }
  });

  it('throws CorruptSegmentError for the small segments truncated at every position', () => {
    for (const { name, packed, blob } of segments.slice(0, 2)) {
      for (let cut = 0; cut < blob.length; cut++) {
        expectCorrupt(blob.subarray(0, cut), packed, decompressor, `${name}: cut at ${cut}`);
      }
    }
  });

  it('never returns other bytes for changes and truncations sampled across the multi-block segment', () => {
    const { packed, blob } = segments[2]!;
    expect(countBlocks(blob)).toBeGreaterThanOrEqual(3);
    const random = makeRandom(0xb10c);
    const positions = new Set<number>();
    while (positions.size < 300) positions.add(Math.floor(random() * blob.length));
    let intact = 0;
    for (const i of positions) {
      const bad = blob.slice();
      bad[i] = bad[i]! ^ (1 + Math.floor(random() * 255));
      if (decodeDamaged(bad, packed, decompressor, `byte ${i}`) === 'intact') intact++;
      expectCorrupt(blob.subarray(0, i), packed, decompressor, `cut at ${i}`);
    }
    expect(intact).toBeLessThan(positions.size / 20);
  });
});

// Our own reading of RFC 8878 §3.1.1.1, independent of lib/codec: magic + header bytes.
function frameHeaderSize(blob: Uint8Array): number {
  const fhd = blob[4]!;
  const singleSegment = (fhd >> 5) & 1;
  return 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][fhd & 3]! + [singleSegment, 2, 4, 8][fhd >> 6]!;
}

function countBlocks(blob: Uint8Array): number {
  let pos = frameHeaderSize(blob);
  let blocks = 0;
  for (let last = 0; !last; blocks++) {
    const header = blob[pos]! | (blob[pos + 1]! << 8) | (blob[pos + 2]! << 16);
    last = header & 1;
    pos += 3 + (((header >> 1) & 3) === 1 ? 1 : header >> 3);
  }
  return blocks;
}
