// The parts of the zstd frame format (RFC 8878 §3.1.1) the segment codec checks itself: the
// header fields, where the last block ends, and the content checksum. @bokuweb/zstd-wasm's
// compress() cannot enable ZSTD_c_checksumFlag, so encodeSegment adds the checksum afterwards.
import { CorruptSegmentError } from './errors.js';
import { XXH3_CORE } from './xxh3-core.js';
import { xxh64Low32 } from './xxh64.js';

const { readLE32 } = XXH3_CORE;

const ZSTD_MAGIC = 0xfd2fb528;
const CHECKSUM_FLAG = 0x04;
const RESERVED_BIT = 0x08;
const CHECKSUM_BYTES = 4;

export interface FrameLayout {
  /** Frame_Content_Size from the header. */
  contentSize: number;
  hasChecksum: boolean;
  /** Index just past the last block: where the checksum starts when there is one. */
  blocksEnd: number;
  /** Index of the first block's header. */
  firstBlock: number;
}

/**
 * Parses the header and walks the block headers of the zstd frame at the start of `blob`.
 * Throws CorruptSegmentError for anything encodeSegment never writes or a frame cut short.
 */
export function readFrameLayout(blob: Uint8Array, maxContentSize: number): FrameLayout {
  if (blob.length < 6) throw new CorruptSegmentError(`blob is ${blob.length} bytes, too short for a zstd frame`);
  if (readLE32(blob, 0) !== ZSTD_MAGIC) throw new CorruptSegmentError('blob does not start with the zstd magic number');
  const descriptor = blob[4]!;
  if (descriptor & RESERVED_BIT) throw new CorruptSegmentError('zstd frame header has its reserved bit set');
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictIdBytes = [0, 1, 2, 4][descriptor & 3]!;
  const fcsBytes = [singleSegment, 2, 4, 8][fcsFlag]!;
  if (fcsBytes === 0) throw new CorruptSegmentError('zstd frame header carries no content size');
  const at = 5 + (singleSegment ? 0 : 1) + dictIdBytes;
  if (at + fcsBytes > blob.length) throw new CorruptSegmentError('zstd frame header is truncated');
  let contentSize = 0;
  for (let i = fcsBytes - 1; i >= 0; i--) contentSize = contentSize * 256 + blob[at + i]!;
  if (fcsBytes === 2) contentSize += 256;
  if (contentSize > maxContentSize) {
    throw new CorruptSegmentError(`zstd frame header claims ${contentSize} bytes, more than ${maxContentSize}`);
  }
  return {
    contentSize,
    hasChecksum: (descriptor & CHECKSUM_FLAG) !== 0,
    blocksEnd: findBlocksEnd(blob, at + fcsBytes),
    firstBlock: at + fcsBytes,
  };
}

// Block_Header: 3 bytes little-endian, Last_Block (1 bit), Block_Type (2), Block_Size (21).
// An RLE block holds one byte whatever its Block_Size says.
function findBlocksEnd(blob: Uint8Array, pos: number): number {
  for (;;) {
    if (pos + 3 > blob.length) throw new CorruptSegmentError('zstd frame is truncated inside its blocks');
    const header = blob[pos]! | (blob[pos + 1]! << 8) | (blob[pos + 2]! << 16);
    const type = (header >> 1) & 3;
    if (type === 3) throw new CorruptSegmentError('zstd block header has the reserved block type');
    pos += 3 + (type === 1 ? 1 : header >>> 3);
    if (header & 1) return pos;
  }
}

/**
 * Turns the single checksum-less zstd frame `frame` (the compression of `content`) into the same
 * frame with Content_Checksum_flag set and the low 32 bits of XXH64(content) appended. The flag
 * does not change the header size, so every other byte stays where it was.
 */
export function addContentChecksum(frame: Uint8Array, content: Uint8Array): Uint8Array {
  const layout = readFrameLayout(frame, Number.MAX_SAFE_INTEGER);
  if (layout.hasChecksum || layout.blocksEnd !== frame.length || layout.contentSize !== content.length) {
    throw new Error('zstd-wasm did not return one checksum-less frame holding the content; cannot add a checksum');
  }
  const out = new Uint8Array(frame.length + CHECKSUM_BYTES);
  out.set(frame);
  out[4] = out[4]! | CHECKSUM_FLAG;
  const sum = xxh64Low32(content);
  out[frame.length] = sum & 0xff;
  out[frame.length + 1] = (sum >>> 8) & 0xff;
  out[frame.length + 2] = (sum >>> 16) & 0xff;
  out[frame.length + 3] = sum >>> 24;
  return out;
}

/** Throws unless the frame has a checksum and it ends exactly where the blob does. */
export function checkChecksumPlacement(blob: Uint8Array, layout: FrameLayout): void {
  if (!layout.hasChecksum) throw new CorruptSegmentError('zstd frame header has no content checksum flag');
  const end = layout.blocksEnd + CHECKSUM_BYTES;
  if (end > blob.length) throw new CorruptSegmentError('zstd frame is truncated inside its content checksum');
  if (end < blob.length) throw new CorruptSegmentError(`${blob.length - end} bytes follow the zstd frame`);
}

/** Throws unless the checksum stored after the blocks is that of `content`. */
export function verifyContentChecksum(blob: Uint8Array, layout: FrameLayout, content: Uint8Array): void {
  const stored = readLE32(blob, layout.blocksEnd);
  const actual = xxh64Low32(content);
  if (stored !== actual) {
    throw new CorruptSegmentError(`zstd content checksum is ${hex(stored)} but the decompressed content hashes to ${hex(actual)}`);
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Largest content rawFrame writes: its size fits the one-byte Frame_Content_Size of a single-segment frame. */
export const RAW_FRAME_MAX = 255;

/**
 * `content` as one zstd frame of one raw (stored) block, with its content size and checksum, as
 * any zstd decoder reads it. For content this small compressing saves nothing the block header
 * does not cost back, and skipping the compressor is most of a single-message push's zstd time.
 */
export function rawFrame(content: Uint8Array): Uint8Array {
  if (content.length === 0 || content.length > RAW_FRAME_MAX)
    throw new RangeError(`rawFrame holds 1..${RAW_FRAME_MAX} bytes, got ${content.length}`);
  const n = content.length;
  const out = new Uint8Array(9 + n + CHECKSUM_BYTES);
  out.set([0x28, 0xb5, 0x2f, 0xfd, 0x20 | CHECKSUM_FLAG, n]);
  const block = (n << 3) | 1; // Last_Block, Block_Type 0 (raw), Block_Size n
  out[6] = block & 0xff;
  out[7] = (block >> 8) & 0xff;
  out[8] = block >> 16;
  out.set(content, 9);
  const sum = xxh64Low32(content);
  out[9 + n] = sum & 0xff;
  out[10 + n] = (sum >>> 8) & 0xff;
  out[11 + n] = (sum >>> 16) & 0xff;
  out[12 + n] = sum >>> 24;
  return out;
}

/** The content of a frame that is one raw block (as rawFrame writes), without copying; else null. */
export function rawContent(blob: Uint8Array, layout: FrameLayout): Uint8Array | null {
  const at = layout.firstBlock;
  const n = layout.contentSize;
  if (layout.blocksEnd !== at + 3 + n) return null;
  const header = blob[at]! | (blob[at + 1]! << 8) | (blob[at + 2]! << 16);
  return header === ((n << 3) | 1) ? blob.subarray(at + 3, at + 3 + n) : null;
}
