// XXH3-128 arithmetic and the paths for inputs up to 240 bytes (every transaction id in
// practice), written from the XXH3 specification. No BigInt (measured at ~0.25M hashes/s): a
// 64-bit value is a pair of uint32 numbers (hi, lo); Math.imul gives low halves of products,
// exact float multiplies give high halves.

const SECRET = new Uint8Array([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97,
  0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff,
  0x72, 0x21, 0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91,
  0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46,
  0xa9, 0xde, 0xac, 0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0,
  0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81,
  0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, 0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b,
  0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28,
  0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
]);
const SECRET_SIZE = 192;
// The secret as a little-endian u32 at every byte offset: one load instead of four.
const SECRET_U32 = Uint32Array.from({ length: SECRET_SIZE - 3 }, (_, i) => readLE32(SECRET, i));

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const P64_1_HI = 0x9e3779b1,
  P64_1_LO = 0x85ebca87;
const P64_2_HI = 0xc2b2ae3d,
  P64_2_LO = 0x27d4eb4f;
const P64_3_HI = 0x165667b1,
  P64_3_LO = 0x9e3779f9;
const P64_4_HI = 0x85ebca77,
  P64_4_LO = 0xc2b2ae63;
const P64_5_HI = 0x27d4eb2f,
  P64_5_LO = 0x165667c5;
const MX1_HI = 0x16566791,
  MX1_LO = 0x9e3779f9;
const MX2_HI = 0x9fb21c65,
  MX2_LO = 0x1e98df25;

const TWO_32 = 0x100000000;
const INV_16 = 1 / 0x10000;

// Helpers return through this register file. Module-level `let`s would box every value over
// 2^30 into a fresh HeapNumber on each write; typed-array slots store raw uint32 (measured ~2x).
const R = new Uint32Array(14) as Uint32Array & Record<RegisterIndex, number>;
type RegisterIndex = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13;
const HI = 0,
  LO = 1; // result of the last 64-bit helper
const Q3 = 2,
  Q2 = 3,
  Q1 = 4,
  Q0 = 5; // 128-bit product, 32-bit limbs from high to low
const H_HI = 6,
  H_LO = 7,
  L_HI = 8,
  L_LO = 9; // the hash: high 64 bits, then low 64 bits
const AL_HI = 10,
  AL_LO = 11,
  AH_HI = 12,
  AH_LO = 13; // acc.low64 and acc.high64 of the 17..240 paths

function readLE32(b: Uint8Array, p: number): number {
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
}

// High 32 bits of a * b (both uint32): a * b = p1 * 2^16 + p0, each partial exact below 2^53.
function mulHi32(a: number, b: number): number {
  const p0 = a * (b & 0xffff);
  const p1 = a * (b >>> 16);
  return Math.floor((p1 + Math.floor(p0 * INV_16)) * INV_16) >>> 0;
}

function mul64(aHi: number, aLo: number, bHi: number, bLo: number): void {
  R[LO] = Math.imul(aLo, bLo) >>> 0;
  R[HI] = (mulHi32(aLo, bLo) + Math.imul(aLo, bHi) + Math.imul(aHi, bLo)) >>> 0;
}

function mul128(aHi: number, aLo: number, bHi: number, bLo: number): void {
  const lhLo = Math.imul(aLo, bHi) >>> 0,
    hlLo = Math.imul(aHi, bLo) >>> 0;
  const t1 = mulHi32(aLo, bLo) + lhLo + hlLo;
  const t2 = mulHi32(aLo, bHi) + mulHi32(aHi, bLo) + (Math.imul(aHi, bHi) >>> 0) + Math.floor(t1 / TWO_32);
  R[Q0] = Math.imul(aLo, bLo) >>> 0;
  R[Q1] = t1 >>> 0;
  R[Q2] = t2 >>> 0;
  R[Q3] = (mulHi32(aHi, bHi) + Math.floor(t2 / TWO_32)) >>> 0;
}

// Low 64 bits xor high 64 bits of the 128-bit product.
function mulFold64(aHi: number, aLo: number, bHi: number, bLo: number): void {
  mul128(aHi, aLo, bHi, bLo);
  R[HI] = (R[Q1] ^ R[Q3]) >>> 0;
  R[LO] = (R[Q0] ^ R[Q2]) >>> 0;
}

function add64(aHi: number, aLo: number, bHi: number, bLo: number): void {
  const lo = aLo + bLo;
  R[LO] = lo >>> 0;
  R[HI] = (aHi + bHi + (lo >= TWO_32 ? 1 : 0)) >>> 0;
}

function avalancheXxh64(hi: number, lo: number): void {
  lo = (lo ^ (hi >>> 1)) >>> 0;
  mul64(hi, lo, P64_2_HI, P64_2_LO);
  lo = (R[LO] ^ ((R[LO] >>> 29) | (R[HI] << 3))) >>> 0;
  hi = (R[HI] ^ (R[HI] >>> 29)) >>> 0;
  mul64(hi, lo, P64_3_HI, P64_3_LO);
  R[LO] = (R[LO] ^ R[HI]) >>> 0;
}

function avalancheXxh3(hi: number, lo: number): void {
  mul64(hi, (lo ^ (hi >>> 5)) >>> 0, MX1_HI, MX1_LO);
  R[LO] = (R[LO] ^ R[HI]) >>> 0;
}

function bswap32(x: number): number {
  return ((x >>> 24) | ((x >>> 8) & 0xff00) | ((x & 0xff00) << 8) | (x << 24)) >>> 0;
}

function storeLow(): void {
  R[L_HI] = R[HI];
  R[L_LO] = R[LO];
}

function storeHigh(): void {
  R[H_HI] = R[HI];
  R[H_LO] = R[LO];
}

function hashEmpty(): void {
  avalancheXxh64((SECRET_U32[68]! ^ SECRET_U32[76]!) >>> 0, (SECRET_U32[64]! ^ SECRET_U32[72]!) >>> 0);
  storeLow();
  avalancheXxh64((SECRET_U32[84]! ^ SECRET_U32[92]!) >>> 0, (SECRET_U32[80]! ^ SECRET_U32[88]!) >>> 0);
  storeHigh();
}

function hash1to3(b: Uint8Array, len: number): void {
  const combinedL = ((b[0]! << 16) | (b[len >> 1]! << 24) | b[len - 1]! | (len << 8)) >>> 0;
  const swapped = bswap32(combinedL);
  const combinedH = ((swapped << 13) | (swapped >>> 19)) >>> 0;
  avalancheXxh64(0, (combinedL ^ SECRET_U32[0]! ^ SECRET_U32[4]!) >>> 0);
  storeLow();
  avalancheXxh64(0, (combinedH ^ SECRET_U32[8]! ^ SECRET_U32[12]!) >>> 0);
  storeHigh();
}

function hash4to8(b: Uint8Array, len: number): void {
  const kHi = (readLE32(b, len - 4) ^ SECRET_U32[20]! ^ SECRET_U32[28]!) >>> 0;
  const kLo = (readLE32(b, 0) ^ SECRET_U32[16]! ^ SECRET_U32[24]!) >>> 0;
  mul128(kHi, kLo, P64_1_HI, P64_1_LO + len * 4);
  let mLHi = R[Q1],
    mLLo = R[Q0];
  // m.high += m.low << 1
  add64(R[Q3], R[Q2], ((mLHi << 1) | (mLLo >>> 31)) >>> 0, (mLLo << 1) >>> 0);
  const mHHi = R[HI],
    mHLo = R[LO];
  mLLo = (mLLo ^ ((mHLo >>> 3) | (mHHi << 29))) >>> 0;
  mLHi = (mLHi ^ (mHHi >>> 3)) >>> 0;
  mul64(mLHi, (mLLo ^ (mLHi >>> 3)) >>> 0, MX2_HI, MX2_LO);
  R[L_LO] = (R[LO] ^ ((R[LO] >>> 28) | (R[HI] << 4))) >>> 0;
  R[L_HI] = (R[HI] ^ (R[HI] >>> 28)) >>> 0;
  avalancheXxh3(mHHi, mHLo);
  storeHigh();
}

function hash9to16(b: Uint8Array, len: number): void {
  const inLoHi = readLE32(b, 4),
    inLoLo = readLE32(b, 0);
  let inHiHi = readLE32(b, len - 4),
    inHiLo = readLE32(b, len - 8);
  mul128(
    (inLoHi ^ inHiHi ^ SECRET_U32[36]! ^ SECRET_U32[44]!) >>> 0,
    (inLoLo ^ inHiLo ^ SECRET_U32[32]! ^ SECRET_U32[40]!) >>> 0,
    P64_1_HI,
    P64_1_LO,
  );
  let mLHi = (R[Q1] + ((len - 1) << 22)) >>> 0;
  const mLLo = R[Q0];
  inHiHi = (inHiHi ^ SECRET_U32[52]! ^ SECRET_U32[60]!) >>> 0;
  inHiLo = (inHiLo ^ SECRET_U32[48]! ^ SECRET_U32[56]!) >>> 0;
  // m.high += input_hi + (u32)input_hi * (PRIME32_2 - 1)
  add64(R[Q3], R[Q2], inHiHi, inHiLo);
  const mid = Math.imul(inHiLo, PRIME32_2 - 1) >>> 0;
  add64(R[HI], R[LO], mulHi32(inHiLo, PRIME32_2 - 1), mid);
  const mHHi = R[HI],
    mHLo = R[LO];
  // m.low ^= byteswap(m.high)
  const xLo = (mLLo ^ bswap32(mHHi)) >>> 0;
  mLHi = (mLHi ^ bswap32(mHLo)) >>> 0;
  mul128(mLHi, xLo, P64_2_HI, P64_2_LO);
  const h128LHi = R[Q1],
    h128LLo = R[Q0],
    h128HHi = R[Q3],
    h128HLo = R[Q2];
  mul64(mHHi, mHLo, P64_2_HI, P64_2_LO);
  add64(h128HHi, h128HLo, R[HI], R[LO]);
  avalancheXxh3(R[HI], R[LO]);
  storeHigh();
  avalancheXxh3(h128LHi, h128LLo);
  storeLow();
}

function mix16(b: Uint8Array, p: number, s: number): void {
  mulFold64(
    (readLE32(b, p + 4) ^ SECRET_U32[s + 4]!) >>> 0,
    (readLE32(b, p) ^ SECRET_U32[s]!) >>> 0,
    (readLE32(b, p + 12) ^ SECRET_U32[s + 12]!) >>> 0,
    (readLE32(b, p + 8) ^ SECRET_U32[s + 8]!) >>> 0,
  );
}

function mix32(b: Uint8Array, p1: number, p2: number, s: number): void {
  mix16(b, p1, s);
  add64(R[AL_HI], R[AL_LO], R[HI], R[LO]);
  const lowHi = R[HI],
    lowLo = R[LO];
  add64(readLE32(b, p2 + 4), readLE32(b, p2), readLE32(b, p2 + 12), readLE32(b, p2 + 8));
  R[AL_HI] = (lowHi ^ R[HI]) >>> 0;
  R[AL_LO] = (lowLo ^ R[LO]) >>> 0;
  mix16(b, p2, s + 16);
  add64(R[AH_HI], R[AH_LO], R[HI], R[LO]);
  const highHi = R[HI],
    highLo = R[LO];
  add64(readLE32(b, p1 + 4), readLE32(b, p1), readLE32(b, p1 + 12), readLE32(b, p1 + 8));
  R[AH_HI] = (highHi ^ R[HI]) >>> 0;
  R[AH_LO] = (highLo ^ R[LO]) >>> 0;
}

function startAcc(len: number): void {
  mul64(0, len, P64_1_HI, P64_1_LO);
  R[AL_HI] = R[HI];
  R[AL_LO] = R[LO];
  R[AH_HI] = 0;
  R[AH_LO] = 0;
}

// Shared tail of the 17..240-byte paths.
function finishAcc(len: number): void {
  add64(R[AL_HI], R[AL_LO], R[AH_HI], R[AH_LO]);
  avalancheXxh3(R[HI], R[LO]);
  storeLow();
  mul64(R[AL_HI], R[AL_LO], P64_1_HI, P64_1_LO);
  let sHi = R[HI],
    sLo = R[LO];
  mul64(R[AH_HI], R[AH_LO], P64_4_HI, P64_4_LO);
  add64(sHi, sLo, R[HI], R[LO]);
  sHi = R[HI];
  sLo = R[LO];
  mul64(0, len, P64_2_HI, P64_2_LO);
  add64(sHi, sLo, R[HI], R[LO]);
  avalancheXxh3(R[HI], R[LO]);
  // high64 = 0 - avalanche(...)
  R[H_LO] = (TWO_32 - R[LO]) >>> 0;
  R[H_HI] = (~R[HI] + (R[LO] === 0 ? 1 : 0)) >>> 0;
}

function hash17to128(b: Uint8Array, len: number): void {
  startAcc(len);
  if (len > 32) {
    if (len > 64) {
      if (len > 96) mix32(b, 48, len - 64, 96);
      mix32(b, 32, len - 48, 64);
    }
    mix32(b, 16, len - 32, 32);
  }
  mix32(b, 0, len - 16, 0);
  finishAcc(len);
}

function hash129to240(b: Uint8Array, len: number): void {
  startAcc(len);
  for (let i = 0; i < 4; i++) mix32(b, 32 * i, 32 * i + 16, 32 * i);
  avalancheXxh3(R[AL_HI], R[AL_LO]);
  R[AL_HI] = R[HI];
  R[AL_LO] = R[LO];
  avalancheXxh3(R[AH_HI], R[AH_LO]);
  R[AH_HI] = R[HI];
  R[AH_LO] = R[LO];
  // Secret offsets per the spec: MIDSIZE_STARTOFFSET 3; SECRET_SIZE_MIN 136 - MIDSIZE_LASTOFFSET 17 - 16.
  const rounds = Math.floor(len / 32);
  for (let i = 4; i < rounds; i++) mix32(b, 32 * i, 32 * i + 16, 3 + 32 * (i - 4));
  mix32(b, len - 16, len - 32, 136 - 17 - 16);
  finishAcc(len);
}

/** Hashes an input of at most 240 bytes into R[H_HI..L_LO]. */
function hashShort(b: Uint8Array, len: number): void {
  if (len <= 16) {
    if (len > 8) hash9to16(b, len);
    else if (len >= 4) hash4to8(b, len);
    else if (len > 0) hash1to3(b, len);
    else hashEmpty();
  } else if (len <= 128) hash17to128(b, len);
  else hash129to240(b, len);
}

// Other modules get these through one object, not `export` on the bindings themselves: an
// exported binding lives in a module cell and made the hot path above ~25% slower (measured).
export const XXH3_CORE = {
  SECRET_SIZE,
  SECRET_U32,
  TWO_32,
  PRIME32_1,
  PRIME32_2,
  PRIME32_3,
  P64_1_HI,
  P64_1_LO,
  P64_2_HI,
  P64_2_LO,
  P64_3_HI,
  P64_3_LO,
  P64_4_HI,
  P64_4_LO,
  P64_5_HI,
  P64_5_LO,
  R,
  HI,
  LO,
  H_HI,
  readLE32,
  mulHi32,
  mul64,
  mulFold64,
  add64,
  avalancheXxh64,
  avalancheXxh3,
  storeLow,
  storeHigh,
  hashShort,
} as const;
