import { createXXHash128, type IHasher } from 'hash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashTransactionIds, xxh3_128, xxh3_128_hex } from '../../lib/codec/xxh3.js';
import { makeRandom, randomBytesFrom } from './random.js';

let hasher: IHasher;
beforeAll(async () => {
  hasher = await createXXHash128();
});

function reference(input: string | Uint8Array): string {
  hasher.init();
  hasher.update(input);
  return hasher.digest('hex');
}

const random = makeRandom(0x5eed);

const randomBytes = (len: number) => randomBytesFrom(random, len);

// Mixes ASCII, 2-, 3- and 4-byte UTF-8 code points; never a lone surrogate.
function randomString(len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) {
    const r = random();
    if (r < 0.6) s += String.fromCharCode(0x20 + Math.floor(random() * 95));
    else if (r < 0.75) s += String.fromCharCode(0x80 + Math.floor(random() * 0x780));
    else if (r < 0.9) s += String.fromCharCode(0x800 + Math.floor(random() * 0xd000));
    else s += String.fromCodePoint(0x10000 + Math.floor(random() * 0xfffff));
  }
  return s;
}

describe('xxh3_128', () => {
  it.each([
    ['', '99aa06d3014798d86001c324468d497f'],
    ['a', 'a96faf705af16834e6c632b61e964e1f'],
    ['hello world', 'df8d09e93f874900a99b8775cc15b6c7'],
    ['tx-12345', '410f08c9e4bce2345662f7895215a53f'],
  ])('hashes %j to the reference value in docs/storage.md#the-sidecar', (input, hex) => {
    expect(xxh3_128_hex(input)).toBe(hex);
    expect(xxh3_128_hex(new TextEncoder().encode(input))).toBe(hex);
  });

  it('returns 16 bytes, high 64 bits first, like hash-wasm digest("binary")', () => {
    hasher.init();
    hasher.update('tx-12345');
    expect(xxh3_128('tx-12345')).toEqual(hasher.digest('binary'));
  });

  it('agrees with hash-wasm on 10,000 random strings of 0 to 300 characters with multibyte UTF-8', () => {
    for (let i = 0; i < 10_000; i++) {
      const s = randomString(Math.floor(random() * 301));
      const ours = xxh3_128_hex(s);
      if (ours !== reference(s)) expect(ours, JSON.stringify(s)).toBe(reference(s));
    }
  });

  it('agrees with hash-wasm on random bytes of every length from 0 to 2100', () => {
    for (let len = 0; len <= 2100; len++) {
      const b = randomBytes(len);
      const ours = xxh3_128_hex(b);
      if (ours !== reference(b)) expect(ours, `length ${len}`).toBe(reference(b));
    }
  });

  it('agrees with hash-wasm around every length-class and block boundary', () => {
    const lengths = [3, 4, 8, 9, 16, 17, 32, 33, 64, 65, 96, 97, 128, 129, 160, 239, 240, 241, 255, 256, 257];
    for (const k of [1, 2, 3, 4, 7, 8, 16, 63, 64, 65]) lengths.push(1024 * k - 1, 1024 * k, 1024 * k + 1, 64 * k + 240);
    lengths.push(10 * 1024, 100 * 1024, 100 * 1024 + 37, 1 << 20);
    for (const len of lengths) {
      const b = randomBytes(len);
      expect(xxh3_128_hex(b), `length ${len}`).toBe(reference(b));
    }
  });

  it('agrees with hash-wasm on long multibyte strings of 1 KiB, 10 KiB and 100 KiB', () => {
    for (const chars of [1024, 10 * 1024, 100 * 1024]) {
      const s = randomString(chars);
      expect(xxh3_128_hex(s), `${chars} characters`).toBe(reference(s));
    }
  });

  it('hashes a string with a lone surrogate as TextEncoder encodes it', () => {
    const s = 'tx-\udc00-end';
    expect(xxh3_128_hex(s)).toBe(xxh3_128_hex(new TextEncoder().encode(s)));
  });

  it('hashes a subarray by its own bytes, ignoring the rest of the buffer', () => {
    const whole = new TextEncoder().encode('xxhello worldyy');
    expect(xxh3_128_hex(whole.subarray(2, 13))).toBe('df8d09e93f874900a99b8775cc15b6c7');
  });
});

describe('hashTransactionIds', () => {
  it('concatenates one 16-byte hash per transaction id in order', () => {
    const ids = ['tx-12345', '', 'a', 'é'.repeat(200)];
    const hashes = hashTransactionIds(ids);
    expect(hashes).toHaveLength(64);
    ids.forEach((txn, i) => expect(hashes.subarray(16 * i, 16 * i + 16)).toEqual(xxh3_128(txn)));
  });
});
