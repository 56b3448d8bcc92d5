import { createXXHash64, type IHasher } from 'hash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { xxh64Hex, xxh64Low32 } from '../../lib/codec/xxh64.js';
import { makeRandom, randomBytesFrom } from './random.js';

let hasher: IHasher;
beforeAll(async () => {
  hasher = await createXXHash64(0, 0);
});

function reference(input: Uint8Array): string {
  hasher.init();
  hasher.update(input);
  return hasher.digest('hex');
}

const random = makeRandom(0x64);

const randomBytes = (len: number) => randomBytesFrom(random, len);

describe('xxh64', () => {
  it.each([
    ['', 'ef46db3751d8e999'],
    ['a', 'd24ec4f1a98c6e5b'],
    ['abc', '44bc2cf5ad770999'],
  ])('hashes %j with seed 0 to the reference value', (input, hex) => {
    const bytes = new TextEncoder().encode(input);
    expect(xxh64Hex(bytes)).toBe(hex);
    expect(xxh64Low32(bytes)).toBe(parseInt(hex.slice(8), 16));
  });

  it('agrees with hash-wasm on random inputs of every length from 0 to 1000 bytes', () => {
    for (let len = 0; len <= 1000; len++) {
      const input = randomBytes(len);
      expect(xxh64Hex(input), `length ${len}`).toBe(reference(input));
    }
  });

  it('agrees with hash-wasm on large inputs, including lengths that leave every tail size', () => {
    for (const len of [128 * 1024, 1_000_003, 4 * 1024 * 1024 + 31]) {
      const input = randomBytes(len);
      expect(xxh64Hex(input), `length ${len}`).toBe(reference(input));
    }
  });

  it('hashes a view at any alignment inside a larger buffer like a standalone copy', () => {
    const pool = randomBytes(5000);
    for (const start of [0, 1, 2, 3, 4, 7]) {
      const view = pool.subarray(start, start + 4093);
      expect(xxh64Hex(view), `offset ${start}`).toBe(reference(view.slice()));
    }
  });

  it('returns the low 32 bits as an unsigned number', () => {
    for (let i = 0; i < 200; i++) {
      const input = randomBytes(1 + Math.floor(random() * 100));
      const low = xxh64Low32(input);
      expect(low).toBeGreaterThanOrEqual(0);
      expect(low).toBe(parseInt(reference(input).slice(8), 16));
    }
  });
});
