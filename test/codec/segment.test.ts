import { createXXHash64, type IHasher } from 'hash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { CorruptSegmentError, InvalidFrameError } from '../../lib/codec/errors.js';
import { packFrames, type Frame } from '../../lib/codec/frame.js';
import { countFrames, decodeSegment, decompressSegment, encodeSegment, type Decompressor } from '../../lib/codec/segment.js';
import { ensureZstd, getZstd } from '../../lib/codec/zstd.js';

const enc = new TextEncoder();
const decompressors: Decompressor[] = ['zstd-wasm', 'fzstd'];

function makeFrames(n: number): Frame[] {
  return Array.from({ length: n }, (_, i) => ({
    messageId: Uint8Array.from({ length: 16 }, (_, k) => (i + k * 13) & 0xff),
    traceId: i % 3 === 0 ? new Uint8Array(16).fill(i & 0xff) : null,
    transactionId: `tx-${i}-${'ü'.repeat(i % 4)}`,
    producerSub: i % 2 === 0 ? `user-${i % 7}` : null,
    encrypted: i % 5 === 0,
    payload: enc.encode(JSON.stringify({ order: i, item: 'widget', qty: i % 9, note: 'n'.repeat(i % 50) })),
  }));
}

function plain(f: Frame) {
  return { ...f, messageId: [...f.messageId], traceId: f.traceId && [...f.traceId], payload: [...f.payload] };
}

// Our own reading of the zstd frame header (RFC 8878 §3.1.1), independent of lib/codec.
function parseZstdFrame(blob: Uint8Array) {
  expect([...blob.subarray(0, 4)]).toEqual([0x28, 0xb5, 0x2f, 0xfd]);
  const fhd = blob[4]!;
  const fcsFlag = fhd >> 6;
  const singleSegment = (fhd >> 5) & 1;
  const checksum = (fhd >> 2) & 1;
  let pos = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][fhd & 3]!;
  const fcsBytes = [singleSegment, 2, 4, 8][fcsFlag]!;
  let contentSize: number | null = null;
  if (fcsBytes > 0) {
    contentSize = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) contentSize = contentSize * 256 + blob[pos + i]!;
    if (fcsBytes === 2) contentSize += 256;
  }
  pos += fcsBytes;
  for (let last = 0; !last;) {
    const header = blob[pos]! | (blob[pos + 1]! << 8) | (blob[pos + 2]! << 16);
    last = header & 1;
    const type = (header >> 1) & 3;
    pos += 3 + (type === 1 ? 1 : header >> 3);
  }
  return { fcsFlag, singleSegment, contentSize, end: pos + 4 * checksum };
}

// A valid zstd frame holding `content` as one raw block, so a test controls every byte.
function rawZstdFrame(content: Uint8Array, withContentSize = true): Uint8Array {
  const header = withContentSize ? [0xa4, ...u32(content.length)] : [0x04, 0x58];
  const block = (content.length << 3) | 1;
  const frame = [0x28, 0xb5, 0x2f, 0xfd, ...header, block & 0xff, (block >> 8) & 0xff, block >> 16, ...content];
  return Uint8Array.from([...frame, ...u32(checksumOf(content))]);
}

function u32(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24];
}

let hasher: IHasher;

// Low 32 bits of XXH64(content), from hash-wasm rather than lib/codec.
function checksumOf(content: Uint8Array): number {
  hasher.init();
  hasher.update(content);
  return parseInt(hasher.digest('hex').slice(8), 16);
}

// zstd-wasm's frame of `body` with the content checksum added, as encodeSegment writes it but
// without packFrames, so a test can compress bodies that are not valid frames.
function compressBody(body: Uint8Array): Uint8Array {
  const frame = getZstd()!.compress(body, 3);
  const blob = Uint8Array.from([...frame, ...u32(checksumOf(body))]);
  blob[4] = blob[4]! | 0x04;
  return blob;
}

beforeAll(async () => {
  await ensureZstd();
  hasher = await createXXHash64(0, 0);
});

describe('encodeSegment', () => {
  it('writes one zstd frame whose header carries the packed size as Frame_Content_Size', async () => {
    for (const n of [1, 10, 1000]) {
      const frames = makeFrames(n);
      const blob = await encodeSegment(frames);
      const header = parseZstdFrame(blob);
      expect(header.fcsFlag !== 0 || header.singleSegment === 1).toBe(true);
      expect(header.contentSize).toBe(packFrames(frames).length);
      expect(header.end).toBe(blob.length);
    }
  });

  it('compresses at the level it is given, and every level decodes to the same frames', async () => {
    const frames = makeFrames(300);
    const fast = await encodeSegment(frames, 1);
    const small = await encodeSegment(frames, 19);
    expect(small.length).toBeLessThan(fast.length);
    expect(decodeSegment(fast, 0, 0, 299).map(plain)).toEqual(decodeSegment(small, 0, 0, 299).map(plain));
  });

  it('stores a segment of at most 255 packed bytes as one raw block that both decompressors read', async () => {
    const small = [{ ...makeFrames(1)[0]!, payload: new TextEncoder().encode('{"message":"Hello World","partition_id":7}') }];
    const packed = packFrames(small);
    expect(packed.length).toBeLessThanOrEqual(255);
    const blob = await encodeSegment(small);
    const header = parseZstdFrame(blob);
    expect([header.singleSegment, header.contentSize, header.end]).toEqual([1, packed.length, blob.length]);
    expect((blob[6]! >> 1) & 3).toBe(0); // Block_Type raw
    expect(getZstd()!.decompress(blob)).toEqual(packed);
    for (const d of decompressors) expect(decompressSegment(blob, d)).toEqual(packed);
    const [m] = decodeSegment(blob, 7, 7, 7);
    expect([m!.offset, m!.transactionId, new TextDecoder().decode(m!.payload)]).toEqual([
      7,
      small[0]!.transactionId,
      '{"message":"Hello World","partition_id":7}',
    ]);
    // Read without the compressor, and still checked: any changed byte is a CorruptSegmentError.
    for (let i = 0; i < blob.length; i++) {
      const bad = blob.slice();
      bad[i] = bad[i]! ^ 0x01;
      for (const d of decompressors) expect(() => decompressSegment(bad, d), `byte ${i} with ${d}`).toThrow(CorruptSegmentError);
    }
    // One byte more than a raw frame holds goes through the compressor.
    const big = makeFrames(40);
    expect(packFrames(big).length).toBeGreaterThan(255);
    expect(parseZstdFrame(await encodeSegment(big)).contentSize).toBe(packFrames(big).length);
  });

  it('refuses an empty segment and a non-integer level with InvalidFrameError', async () => {
    await expect(encodeSegment([])).rejects.toThrow(InvalidFrameError);
    await expect(encodeSegment(makeFrames(1), 2.5)).rejects.toThrow(InvalidFrameError);
  });
});

describe('decodeSegment', () => {
  const frames = makeFrames(1000);
  let blob: Uint8Array;
  beforeAll(async () => {
    blob = await encodeSegment(frames);
  });

  it('returns every frame with offsets counted from the base offset', () => {
    const messages = decodeSegment(blob, 7000, 7000, 7999, 1000);
    expect(messages.map((m) => m.offset)).toEqual(frames.map((_, i) => 7000 + i));
    expect(messages.map(({ offset: _, ...f }) => plain(f))).toEqual(frames.map(plain));
  });

  it('returns only the frames in [from, to], inclusive at both ends', () => {
    const messages = decodeSegment(blob, 7000, 7100, 7102);
    expect(messages.map((m) => m.offset)).toEqual([7100, 7101, 7102]);
    expect(messages.map(({ offset: _, ...f }) => plain(f))).toEqual(frames.slice(100, 103).map(plain));
    expect(decodeSegment(blob, 7000, 7999, 7999).map((m) => m.transactionId)).toEqual([frames[999]!.transactionId]);
  });

  it('clamps a range that extends past either end of the segment', () => {
    expect(decodeSegment(blob, 7000, 0, 7001).map((m) => m.offset)).toEqual([7000, 7001]);
    expect(decodeSegment(blob, 7000, 7998, Number.MAX_SAFE_INTEGER).map((m) => m.offset)).toEqual([7998, 7999]);
    expect(decodeSegment(blob, 7000, 0, Number.MAX_SAFE_INTEGER)).toHaveLength(1000);
  });

  it('returns nothing for a range outside the segment or with from after to', () => {
    expect(decodeSegment(blob, 7000, 8000, 9000)).toEqual([]);
    expect(decodeSegment(blob, 7000, 0, 6999)).toEqual([]);
    expect(decodeSegment(blob, 7000, 7500, 7499)).toEqual([]);
  });

  it('only length-checks frames outside the range, leaving their strings undecoded', async () => {
    const body = packFrames(makeFrames(3));
    body[4 + 1 + 16 + 16 + 2] = 0xff; // first byte of frame 0's transaction id: invalid UTF-8
    const bad = compressBody(body);
    expect(decodeSegment(bad, 0, 1, 2).map((m) => m.offset)).toEqual([1, 2]);
    expect(() => decodeSegment(bad, 0, 0, 0)).toThrow(CorruptSegmentError);
  });

  it('reads a blob that is a view into a larger buffer, as database drivers return', () => {
    const pool = new Uint8Array(blob.length + 100).fill(0xee);
    pool.set(blob, 37);
    const view = pool.subarray(37, 37 + blob.length);
    expect(decodeSegment(view, 0, 5, 5)[0]!.transactionId).toBe(frames[5]!.transactionId);
  });

  it('counts the frames in a segment and checks the count against the row when asked', () => {
    expect(countFrames(blob)).toBe(1000);
    expect(countFrames(blob, 1000)).toBe(1000);
    expect(() => countFrames(blob, 999)).toThrow(CorruptSegmentError);
  });

  it('throws CorruptSegmentError when the frame count differs from end_offset - base_offset + 1', () => {
    expect(() => decodeSegment(blob, 0, 0, 0, 1001)).toThrow(/holds 1000 frames but its row spans 1001/);
    expect(() => decodeSegment(blob, 0, 0, 0, 999)).toThrow(CorruptSegmentError);
  });

  it('rejects non-integer offsets with RangeError', () => {
    expect(() => decodeSegment(blob, 0.5, 0, 1)).toThrow(RangeError);
  });
});

describe.each(decompressors)('a damaged segment read with %s', (decompressor) => {
  const frames = makeFrames(50);
  const packed = packFrames(frames);
  let blob: Uint8Array;
  beforeAll(async () => {
    blob = await encodeSegment(frames);
  });

  it('decompresses to exactly the packed frames', () => {
    expect(decompressSegment(blob, decompressor)).toEqual(packed);
  });

  it('throws CorruptSegmentError when truncated at any position', () => {
    for (let cut = 0; cut < blob.length; cut++) {
      expect(() => decompressSegment(blob.subarray(0, cut), decompressor), `cut at ${cut}`).toThrow(CorruptSegmentError);
    }
  });

  it('throws CorruptSegmentError when garbage follows the zstd frame', () => {
    const longer = Uint8Array.from([...blob, 1, 2, 3]);
    expect(() => decompressSegment(longer, decompressor)).toThrow(CorruptSegmentError);
    const twoFrames = Uint8Array.from([...blob, ...blob]);
    expect(() => decompressSegment(twoFrames, decompressor)).toThrow(CorruptSegmentError);
  });

  it('throws CorruptSegmentError when any byte of the content size is changed', () => {
    const at = parseZstdFrame(blob).singleSegment ? 5 : 6;
    for (let i = at; i < at + 4; i++) {
      for (const delta of [1, 0x80, 0xff]) {
        const bad = blob.slice();
        bad[i] = (bad[i]! + delta) & 0xff;
        expect(() => decodeSegment(bad, 0, 0, 49, 50), `byte ${i} + ${delta}`).toThrow(CorruptSegmentError);
      }
    }
  });

  it('lets corruption anywhere in the blob surface only as CorruptSegmentError', () => {
    for (let i = 0; i < blob.length; i++) {
      const bad = blob.slice();
      bad[i] = bad[i]! ^ 0x5a;
      try {
        decodeSegment(bad, 0, 0, 49, 50);
      } catch (error) {
        expect(error, `byte ${i}`).toBeInstanceOf(CorruptSegmentError);
      }
    }
  });

  it('rejects a zstd frame that carries no content size', () => {
    expect(() => decompressSegment(rawZstdFrame(packed, false), decompressor)).toThrow(/no content size/);
    expect(decompressSegment(rawZstdFrame(packed), decompressor)).toEqual(packed);
  });
});

describe('a well-compressed body with bad frames inside', () => {
  const packed = packFrames(makeFrames(4));

  it('throws CorruptSegmentError when the last body_len runs past the end', () => {
    const body = packed.slice();
    const lastStart = packed.length - packFrames(makeFrames(4).slice(3)).length;
    body[lastStart] = body[lastStart]! + 1;
    expect(() => decodeSegment(compressBody(body), 0, 0, 0)).toThrow(/runs past the end/);
  });

  it('throws CorruptSegmentError when a txn_len runs past its frame body', () => {
    const body = packFrames([{ ...makeFrames(1)[0]!, payload: new Uint8Array(0), producerSub: null }]);
    const txnLenAt = 4 + 1 + 16 + 16;
    body[txnLenAt] = body[txnLenAt]! + 1;
    expect(() => decodeSegment(compressBody(body), 0, 0, 0)).toThrow(/runs past the frame body/);
  });

  it('throws CorruptSegmentError for trailing bytes that are not a whole frame', () => {
    const body = Uint8Array.from([...packed, 0, 0]);
    expect(() => decodeSegment(compressBody(body), 0, 0, 3)).toThrow(CorruptSegmentError);
  });

  it('throws CorruptSegmentError for a segment with no frames at all', () => {
    expect(() => decodeSegment(compressBody(new Uint8Array(0)), 0, 0, 0)).toThrow(/no frames/);
  });

  it('throws CorruptSegmentError for a blob that is not zstd', () => {
    expect(() => decodeSegment(packed, 0, 0, 0)).toThrow(/magic number/);
    expect(() => decodeSegment(new Uint8Array(0), 0, 0, 0)).toThrow(CorruptSegmentError);
  });
});
