import { XXH3_CORE } from './xxh3-core.js';

const {
  add64,
  avalancheXxh3,
  HI,
  LO,
  mul64,
  mulFold64,
  mulHi32,
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
  PRIME32_1,
  PRIME32_2,
  PRIME32_3,
  R,
  readLE32,
  SECRET_SIZE,
  SECRET_U32,
  storeHigh,
  storeLow,
  TWO_32,
} = XXH3_CORE;

// Inputs over 240 bytes: eight 64-bit lanes, 64-byte stripes, scrambled every 1 KiB block.
const accHi = new Uint32Array(8);
const accLo = new Uint32Array(8);
const STRIPE = 64;
const STRIPES_PER_BLOCK = (SECRET_SIZE - STRIPE) / 8;
const BLOCK = STRIPE * STRIPES_PER_BLOCK;

function accumulateStripe(b: Uint8Array, p: number, s: number): void {
  for (let i = 0; i < 8; i++) {
    const vLo = readLE32(b, p + 8 * i),
      vHi = readLE32(b, p + 8 * i + 4);
    const kLo = (vLo ^ SECRET_U32[s + 8 * i]!) >>> 0;
    const kHi = (vHi ^ SECRET_U32[s + 8 * i + 4]!) >>> 0;
    const j = i ^ 1;
    const sum = accLo[j]! + vLo;
    accLo[j] = sum;
    accHi[j] = accHi[j]! + vHi + (sum >= TWO_32 ? 1 : 0);
    const prod = accLo[i]! + (Math.imul(kLo, kHi) >>> 0);
    accLo[i] = prod;
    accHi[i] = accHi[i]! + mulHi32(kLo, kHi) + (prod >= TWO_32 ? 1 : 0);
  }
}

function scrambleAcc(s: number): void {
  for (let i = 0; i < 8; i++) {
    const hi = accHi[i]!;
    const lo = (accLo[i]! ^ (hi >>> 15) ^ SECRET_U32[s + 8 * i]!) >>> 0;
    const h = (hi ^ SECRET_U32[s + 8 * i + 4]!) >>> 0;
    mul64(h, lo, 0, PRIME32_1);
    accHi[i] = R[HI];
    accLo[i] = R[LO];
  }
}

function mergeAccs(s: number, startHi: number, startLo: number): void {
  let hi = startHi,
    lo = startLo;
  for (let i = 0; i < 4; i++) {
    const a = 2 * i,
      t = s + 16 * i;
    mulFold64(
      (accHi[a]! ^ SECRET_U32[t + 4]!) >>> 0,
      (accLo[a]! ^ SECRET_U32[t]!) >>> 0,
      (accHi[a + 1]! ^ SECRET_U32[t + 12]!) >>> 0,
      (accLo[a + 1]! ^ SECRET_U32[t + 8]!) >>> 0,
    );
    add64(hi, lo, R[HI], R[LO]);
    hi = R[HI];
    lo = R[LO];
  }
  avalancheXxh3(hi, lo);
}

/** Hashes an input over 240 bytes into R[H_HI..L_LO]. */
export function hashLong(b: Uint8Array, len: number): void {
  accHi.set([0, P64_1_HI, P64_2_HI, P64_3_HI, P64_4_HI, 0, P64_5_HI, 0]);
  accLo.set([PRIME32_3, P64_1_LO, P64_2_LO, P64_3_LO, P64_4_LO, PRIME32_2, P64_5_LO, PRIME32_1]);
  const blocks = Math.floor((len - 1) / BLOCK);
  for (let n = 0; n < blocks; n++) {
    for (let s = 0; s < STRIPES_PER_BLOCK; s++) accumulateStripe(b, n * BLOCK + s * STRIPE, s * 8);
    scrambleAcc(SECRET_SIZE - STRIPE);
  }
  const stripes = Math.floor((len - 1 - BLOCK * blocks) / STRIPE);
  for (let s = 0; s < stripes; s++) accumulateStripe(b, blocks * BLOCK + s * STRIPE, s * 8);
  // Spec offsets: SECRET_LASTACC_START 7 for the last stripe, SECRET_MERGEACCS_START 11.
  accumulateStripe(b, len - STRIPE, SECRET_SIZE - STRIPE - 7);

  const lenHi = Math.floor(len / TWO_32),
    lenLo = len >>> 0;
  mul64(lenHi, lenLo, P64_1_HI, P64_1_LO);
  mergeAccs(11, R[HI], R[LO]);
  storeLow();
  mul64(lenHi, lenLo, P64_2_HI, P64_2_LO);
  mergeAccs(SECRET_SIZE - STRIPE - 11, ~R[HI] >>> 0, ~R[LO] >>> 0);
  storeHigh();
}
