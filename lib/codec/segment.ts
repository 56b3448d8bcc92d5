import { decompress as decompressJs } from 'fzstd';
import { CorruptSegmentError, InvalidFrameError } from './errors.js';
import { locateFrames, packFrames, readFrame, type Frame } from './frame.js';
import { ensureZstd, getZstd } from './zstd.js';
import {
  addContentChecksum,
  checkChecksumPlacement,
  RAW_FRAME_MAX,
  rawContent,
  rawFrame,
  readFrameLayout,
  verifyContentChecksum,
} from './zstd-frame.js';

/**
 * QUEEN_V2_ZSTD_LEVEL when unset; callers read the environment, the codec does not. Level 1, not
 * zstd's usual 3: a segment is one request's items, a few KiB of JSON, where the two levels find
 * the same matches. Measured side by side (`BENCH_B_ENV=QUEEN_V2_ZSTD_LEVEL=1 npx tsx bench/ab.ts
 * push`, 4 clients x batch 100, ~200 B payloads): 114.3 vs 114.0 bytes stored a message, and
 * 0.90x the server's CPU a message pushed (12.4 vs 13.8 µs; by round 0.96x, 0.80-1.06).
 */
export const DEFAULT_ZSTD_LEVEL = 1;

/** Largest packed segment we write or read; a bigger header is taken as corruption. */
export const MAX_SEGMENT_BYTES = 2 ** 30;

// zstd-wasm decompresses ~3x faster than fzstd (bench/codec.ts) but its linear memory never
// shrinks, so one huge segment would pin that much memory in the isolate for good.
const WASM_DECOMPRESS_MAX_BYTES = 16 * 2 ** 20;

export interface DecodedMessage extends Frame {
  offset: number;
}

export type Decompressor = 'zstd-wasm' | 'fzstd';

/**
 * Packs frames and compresses them as one zstd frame whose header carries the content size and
 * which ends with the content checksum, so damage inside the compressed data cannot decode to
 * other bytes unnoticed.
 */
export async function encodeSegment(frames: readonly Frame[], level: number = DEFAULT_ZSTD_LEVEL): Promise<Uint8Array> {
  if (frames.length === 0) throw new InvalidFrameError('frames', 'a segment needs at least one frame');
  if (!Number.isInteger(level)) throw new InvalidFrameError('level', `zstd level must be an integer, got ${level}`);
  const packed = packFrames(frames);
  if (packed.length > MAX_SEGMENT_BYTES) {
    throw new InvalidFrameError('frames', `segment packs to ${packed.length} bytes; split it below ${MAX_SEGMENT_BYTES}`);
  }
  if (packed.length <= RAW_FRAME_MAX) return rawFrame(packed);
  await ensureZstd();
  return addContentChecksum(getZstd()!.compress(packed, level), packed);
}

/**
 * Returns the messages with offsets in [from, to] (clamped to the segment), frame i having
 * offset baseOffset + i. Frames outside the range are only length-checked, never decoded.
 * Pass expectedCount (end_offset - base_offset + 1) to reject a blob holding a different
 * number of frames than its row claims.
 */
export function decodeSegment(blob: Uint8Array, baseOffset: number, from: number, to: number, expectedCount?: number): DecodedMessage[] {
  checkOffset('baseOffset', baseOffset);
  checkOffset('from', from);
  checkOffset('to', to);
  const body = decompressSegment(blob);
  const starts = locateFrames(body);
  const count = checkCount(starts.length - 1, expectedCount);
  const first = Math.max(from, baseOffset);
  const last = Math.min(to, baseOffset + count - 1);
  const messages: DecodedMessage[] = [];
  for (let offset = first; offset <= last; offset++) {
    messages.push({ offset, ...readFrame(body, starts[offset - baseOffset]!) });
  }
  return messages;
}

/** How many frames (messages) the segment holds, after checking every frame's lengths. */
export function countFrames(blob: Uint8Array, expectedCount?: number): number {
  return checkCount(locateFrames(decompressSegment(blob)).length - 1, expectedCount);
}

/**
 * Decompresses a segment blob to its packed frames. By default uses zstd-wasm once
 * ensureZstd() has resolved and fzstd (pure JS, no init) otherwise; the output is the same.
 */
export function decompressSegment(blob: Uint8Array, decompressor?: Decompressor): Uint8Array {
  const layout = readFrameLayout(blob, MAX_SEGMENT_BYTES);
  const size = layout.contentSize;
  // Checked before decompressing: with a zero content size fzstd sizes its buffer by the window.
  if (size === 0) throw new CorruptSegmentError('segment holds no frames (zstd content size 0)');
  checkChecksumPlacement(blob, layout);
  // One raw block (a small segment): the content is in the blob as is.
  const stored = rawContent(blob, layout);
  if (stored !== null) {
    verifyContentChecksum(blob, layout, stored);
    return stored;
  }
  const wasm = getZstd();
  const use = decompressor ?? (wasm !== null && size <= WASM_DECOMPRESS_MAX_BYTES ? 'zstd-wasm' : 'fzstd');
  if (use === 'zstd-wasm' && wasm === null) throw new Error('call ensureZstd() before decompressing with zstd-wasm');
  let body: Uint8Array;
  try {
    body = use === 'zstd-wasm' ? wasm!.decompress(blob) : decompressJs(blob);
  } catch (cause) {
    throw new CorruptSegmentError(`zstd could not decompress the blob (${describe(cause)})`, { cause });
  }
  if (body.length !== size) {
    throw new CorruptSegmentError(`zstd produced ${body.length} bytes but the frame header says ${size}`);
  }
  // libzstd inside zstd-wasm verifies the checksum itself (test/codec/checksum.test.ts); fzstd skips it.
  if (use === 'fzstd') verifyContentChecksum(blob, layout, body);
  return body;
}

function checkCount(count: number, expectedCount: number | undefined): number {
  if (count === 0) throw new CorruptSegmentError('segment holds no frames');
  if (expectedCount !== undefined && count !== expectedCount) {
    throw new CorruptSegmentError(`segment holds ${count} frames but its row spans ${expectedCount} offsets`);
  }
  return count;
}

function checkOffset(name: string, value: number): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be a safe integer, got ${value}`);
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
