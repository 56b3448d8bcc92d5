import { describe, expect, it } from 'vitest';
import { CorruptSegmentError, InvalidFrameError } from '../../lib/codec/errors.js';
import { bytesToUuid, locateFrames, packFrames, readFrame, unpackFrames, uuidToBytes, type Frame } from '../../lib/codec/frame.js';

const enc = new TextEncoder();

function id(seed: number): Uint8Array {
  return Uint8Array.from({ length: 16 }, (_, i) => (seed * 31 + i * 7) & 0xff);
}

function frame(over: Partial<Frame> = {}): Frame {
  return {
    messageId: id(1),
    traceId: null,
    transactionId: 'tx-1',
    producerSub: null,
    encrypted: false,
    payload: enc.encode('{"n":1}'),
    ...over,
  };
}

// Compare as plain data: decoded ids and payloads are views, so their buffers differ.
function plain(f: Frame) {
  return {
    ...f,
    messageId: [...f.messageId],
    traceId: f.traceId && [...f.traceId],
    payload: [...f.payload],
  };
}

describe('packFrames and unpackFrames', () => {
  const flagCombos = [0, 1, 2, 3, 4, 5, 6, 7].map((flags) => ({
    flags,
    traceId: flags & 1 ? id(2) : null,
    producerSub: flags & 2 ? 'user-7' : null,
    encrypted: (flags & 4) !== 0,
  }));

  it.each(flagCombos)('round-trips a frame with flags $flags', ({ traceId, producerSub, encrypted }) => {
    const frames = [
      frame({ traceId, producerSub, encrypted }),
      frame({ traceId, producerSub, encrypted, payload: new Uint8Array(0), transactionId: '' }),
      frame({ traceId, producerSub: producerSub && 'sub-😀-ü', encrypted, transactionId: 'tx-日本語-🚀' }),
      frame({
        traceId,
        producerSub: producerSub && 'p'.repeat(0xffff),
        encrypted,
        transactionId: 't'.repeat(0xffff),
        payload: new Uint8Array(70_000).fill(0xab),
      }),
    ];
    expect(unpackFrames(packFrames(frames)).map(plain)).toEqual(frames.map(plain));
  });

  it('writes the little-endian layout of docs/storage.md#frames byte for byte', () => {
    const packed = packFrames([
      frame({ traceId: id(2), producerSub: 'ps', encrypted: true, transactionId: 'tx', payload: Uint8Array.of(9, 8) }),
    ]);
    const body = [7, ...id(1), ...id(2), 2, 0, 0x74, 0x78, 2, 0, 0x70, 0x73, 9, 8];
    expect([...packed]).toEqual([body.length, 0, 0, 0, ...body]);
  });

  it('packs a frame without optional fields as body_len, flags 0, id, txn_len, txn id, payload', () => {
    const packed = packFrames([frame({ transactionId: 'é', payload: Uint8Array.of(1) })]);
    expect([...packed]).toEqual([22, 0, 0, 0, 0, ...id(1), 2, 0, 0xc3, 0xa9, 1]);
  });

  it('returns an empty buffer for no frames and unpacks it to no frames', () => {
    expect(packFrames([])).toHaveLength(0);
    expect(unpackFrames(new Uint8Array(0))).toEqual([]);
  });

  it('accepts a transaction id of exactly 65535 UTF-8 bytes made of multibyte characters', () => {
    const txn = '€'.repeat(0xffff / 3);
    expect(unpackFrames(packFrames([frame({ transactionId: txn })]))[0]!.transactionId).toBe(txn);
  });

  it('rejects a transaction id one byte over 65535 UTF-8 bytes with InvalidFrameError', () => {
    const tooLong = 'é'.repeat(0x8000);
    expect(() => packFrames([frame({ transactionId: tooLong })])).toThrow(InvalidFrameError);
    expect(() => packFrames([frame({ transactionId: 'x'.repeat(0x10000) })])).toThrow(/at most 65535/);
  });

  it('rejects a producer sub over 65535 UTF-8 bytes, naming the field', () => {
    const err = catchError(() => packFrames([frame({ producerSub: '😀'.repeat(0x4000) })]));
    expect(err).toBeInstanceOf(InvalidFrameError);
    expect((err as InvalidFrameError).field).toBe('producerSub');
  });

  it('rejects message and trace ids that are not 16 bytes', () => {
    expect(() => packFrames([frame({ messageId: new Uint8Array(15) })])).toThrow(InvalidFrameError);
    expect(() => packFrames([frame({ traceId: new Uint8Array(17) })])).toThrow(InvalidFrameError);
  });

  it('stores a lone surrogate as U+FFFD, the way TextEncoder does', () => {
    const [back] = unpackFrames(packFrames([frame({ transactionId: 'a\ud800b' })]));
    expect(back!.transactionId).toBe('a\ufffdb');
  });

  it('decodes ids and payloads as views into the packed buffer rather than copies', () => {
    const packed = packFrames([frame(), frame({ messageId: id(9) })]);
    const [, second] = unpackFrames(packed);
    expect(second!.payload.buffer).toBe(packed.buffer);
    expect(second!.messageId.buffer).toBe(packed.buffer);
  });
});

describe('locateFrames and readFrame', () => {
  const packed = packFrames([frame(), frame({ producerSub: 'ps' }), frame({ traceId: id(3) })]);

  it('returns every frame start followed by the buffer length', () => {
    const starts = locateFrames(packed);
    expect(starts).toHaveLength(4);
    expect(starts[0]).toBe(0);
    expect(starts[3]).toBe(packed.length);
    expect(readFrame(packed, starts[2]!).traceId).toEqual(id(3));
  });

  it('throws CorruptSegmentError when body_len runs past the end', () => {
    for (let cut = 1; cut < packed.length; cut++) {
      const starts = locateFrames(packed);
      if (starts.includes(cut)) continue;
      expect(() => locateFrames(packed.subarray(0, cut)), `cut at ${cut}`).toThrow(CorruptSegmentError);
    }
  });

  it('throws CorruptSegmentError when txn_len runs past the frame body', () => {
    const bad = packFrames([frame({ transactionId: 'abc' })]);
    bad[4 + 1 + 16] = 200;
    expect(() => locateFrames(bad)).toThrow(/transaction id runs past/);
  });

  it('throws CorruptSegmentError when psub_len runs past the frame body', () => {
    const bad = packFrames([frame({ transactionId: 'abc', producerSub: 'ps', payload: new Uint8Array(0) })]);
    bad[4 + 1 + 16 + 2 + 3] = 3;
    expect(() => locateFrames(bad)).toThrow(/producer sub runs past/);
  });

  it('throws CorruptSegmentError for a body too short to hold the fixed fields', () => {
    expect(() => locateFrames(Uint8Array.of(2, 0, 0, 0, 0, 0))).toThrow(/shorter than any frame/);
  });

  it('throws CorruptSegmentError for flag bits the format does not define', () => {
    const bad = packFrames([frame()]);
    bad[4] = 8;
    expect(() => locateFrames(bad)).toThrow(/unknown flag bits/);
  });

  it('throws CorruptSegmentError when a transaction id is not valid UTF-8', () => {
    const bad = packFrames([frame({ transactionId: 'ab' })]);
    bad[4 + 1 + 16 + 2] = 0xff;
    expect(() => readFrame(bad, 0)).toThrow(CorruptSegmentError);
  });
});

describe('uuidToBytes and bytesToUuid', () => {
  it('round-trips a UUID and prints it lowercase and hyphenated', () => {
    const uuid = '0190B2D4-7C1E-7A3B-9F00-0123456789AB';
    const bytes = uuidToBytes(uuid);
    expect([...bytes.subarray(0, 4)]).toEqual([0x01, 0x90, 0xb2, 0xd4]);
    expect(bytes[15]).toBe(0xab);
    expect(bytesToUuid(bytes)).toBe(uuid.toLowerCase());
  });

  it('agrees with random UUIDs from crypto.randomUUID', () => {
    for (let i = 0; i < 200; i++) {
      const uuid = crypto.randomUUID();
      expect(bytesToUuid(uuidToBytes(uuid))).toBe(uuid);
    }
  });

  it('rejects strings that are not hyphenated UUIDs and byte arrays that are not 16 long', () => {
    for (const bad of ['', 'not-a-uuid', '0190b2d47c1e7a3b9f000123456789ab', '0190b2d4-7c1e-7a3b-9f00-0123456789ag']) {
      expect(() => uuidToBytes(bad)).toThrow(InvalidFrameError);
    }
    expect(() => bytesToUuid(new Uint8Array(15))).toThrow(InvalidFrameError);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
