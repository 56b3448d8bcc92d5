import { CorruptSegmentError, InvalidFrameError } from './errors.js';

// One frame, little-endian (docs/storage.md#frames):
//   u32 body_len | u8 flags | u8[16] message_id | [u8[16] trace_id] | u16 txn_len | txn bytes
//   | [u16 psub_len | psub bytes] | payload (rest of body)
export const FLAG_TRACE_ID = 1;
export const FLAG_PRODUCER_SUB = 2;
export const FLAG_ENCRYPTED = 4;
const KNOWN_FLAGS = FLAG_TRACE_ID | FLAG_PRODUCER_SUB | FLAG_ENCRYPTED;

export const ID_BYTES = 16;
export const MAX_STRING_BYTES = 0xffff;
const MAX_BODY_BYTES = 0xffffffff;
const MIN_BODY_BYTES = 1 + ID_BYTES + 2;

export interface Frame {
  messageId: Uint8Array;
  traceId: Uint8Array | null;
  transactionId: string;
  producerSub: string | null;
  /** The payload is AES-GCM ciphertext (IV first); the codec never looks inside. */
  encrypted: boolean;
  payload: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Packs frames back to back into one buffer, allocated once. */
export function packFrames(frames: readonly Frame[]): Uint8Array {
  const txnLens = new Array<number>(frames.length);
  const psubLens = new Array<number>(frames.length);
  let total = 0;
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    checkId('messageId', f.messageId);
    if (f.traceId !== null) checkId('traceId', f.traceId);
    const txnLen = measureUtf8('transactionId', f.transactionId);
    const psubLen = f.producerSub === null ? -1 : measureUtf8('producerSub', f.producerSub);
    const body = measureBody(f, txnLen, psubLen);
    if (body > MAX_BODY_BYTES) {
      throw new InvalidFrameError('payload', `frame body is ${body} bytes; the u32 length allows at most ${MAX_BODY_BYTES}`);
    }
    txnLens[i] = txnLen;
    psubLens[i] = psubLen;
    total += 4 + body;
  }

  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let pos = 0;
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    const txnLen = txnLens[i]!;
    const psubLen = psubLens[i]!;
    view.setUint32(pos, measureBody(f, txnLen, psubLen), true);
    out[pos + 4] = flagsOf(f);
    out.set(f.messageId, pos + 5);
    pos += 5 + ID_BYTES;
    if (f.traceId !== null) {
      out.set(f.traceId, pos);
      pos += ID_BYTES;
    }
    view.setUint16(pos, txnLen, true);
    pos = writeUtf8(f.transactionId, out, pos + 2, txnLen);
    if (f.producerSub !== null) {
      view.setUint16(pos, psubLen, true);
      pos = writeUtf8(f.producerSub, out, pos + 2, psubLen);
    }
    out.set(f.payload, pos);
    pos += f.payload.length;
  }
  return out;
}

/**
 * Checks the structure of every frame and returns each frame's start position followed by
 * `buf.length`, so frame i spans [starts[i], starts[i + 1]). Reads lengths only.
 */
export function locateFrames(buf: Uint8Array): number[] {
  const starts: number[] = [];
  let pos = 0;
  while (pos < buf.length) {
    starts.push(pos);
    pos = checkFrame(buf, pos);
  }
  starts.push(pos);
  return starts;
}

/** Decodes the frame at `start`; ids and payload are views into `buf`, not copies. */
export function readFrame(buf: Uint8Array, start: number): Frame {
  const end = checkFrame(buf, start);
  const flags = buf[start + 4]!;
  let pos = start + 5;
  const messageId = buf.subarray(pos, pos + ID_BYTES);
  pos += ID_BYTES;
  let traceId: Uint8Array | null = null;
  if (flags & FLAG_TRACE_ID) {
    traceId = buf.subarray(pos, pos + ID_BYTES);
    pos += ID_BYTES;
  }
  const txnLen = readU16(buf, pos);
  const transactionId = readUtf8(buf, pos + 2, txnLen);
  pos += 2 + txnLen;
  let producerSub: string | null = null;
  if (flags & FLAG_PRODUCER_SUB) {
    const psubLen = readU16(buf, pos);
    producerSub = readUtf8(buf, pos + 2, psubLen);
    pos += 2 + psubLen;
  }
  const encrypted = (flags & FLAG_ENCRYPTED) !== 0;
  return { messageId, traceId, transactionId, producerSub, encrypted, payload: buf.subarray(pos, end) };
}

/** The inverse of packFrames. */
export function unpackFrames(buf: Uint8Array): Frame[] {
  const starts = locateFrames(buf);
  const frames = new Array<Frame>(starts.length - 1);
  for (let i = 0; i < frames.length; i++) frames[i] = readFrame(buf, starts[i]!);
  return frames;
}

// Validates one frame's lengths against its body and the buffer; returns where the next begins.
function checkFrame(buf: Uint8Array, start: number): number {
  if (start + 4 > buf.length) throw corrupt(start, 'body_len runs past the end of the segment');
  const bodyLen = (buf[start]! | (buf[start + 1]! << 8) | (buf[start + 2]! << 16) | (buf[start + 3]! << 24)) >>> 0;
  const end = start + 4 + bodyLen;
  if (end > buf.length) throw corrupt(start, `body_len ${bodyLen} runs past the end of the segment`);
  if (bodyLen < MIN_BODY_BYTES) throw corrupt(start, `body_len ${bodyLen} is shorter than any frame`);
  const flags = buf[start + 4]!;
  if (flags & ~KNOWN_FLAGS) throw corrupt(start, `unknown flag bits ${flags}`);
  let pos = start + 5 + ID_BYTES + (flags & FLAG_TRACE_ID ? ID_BYTES : 0);
  if (pos + 2 > end) throw corrupt(start, 'txn_len runs past the frame body');
  pos += 2 + readU16(buf, pos);
  if (pos > end) throw corrupt(start, 'transaction id runs past the frame body');
  if (flags & FLAG_PRODUCER_SUB) {
    if (pos + 2 > end) throw corrupt(start, 'psub_len runs past the frame body');
    pos += 2 + readU16(buf, pos);
    if (pos > end) throw corrupt(start, 'producer sub runs past the frame body');
  }
  return end;
}

function corrupt(at: number, what: string): CorruptSegmentError {
  return new CorruptSegmentError(`frame at byte ${at}: ${what}`);
}

function flagsOf(f: Frame): number {
  return (f.traceId !== null ? FLAG_TRACE_ID : 0) | (f.producerSub !== null ? FLAG_PRODUCER_SUB : 0) | (f.encrypted ? FLAG_ENCRYPTED : 0);
}

function measureBody(f: Frame, txnLen: number, psubLen: number): number {
  return MIN_BODY_BYTES + (f.traceId !== null ? ID_BYTES : 0) + txnLen + (psubLen >= 0 ? 2 + psubLen : 0) + f.payload.length;
}

function checkId(field: string, id: Uint8Array): void {
  if (id.length !== ID_BYTES) throw new InvalidFrameError(field, `${field} must be ${ID_BYTES} bytes, got ${id.length}`);
}

// UTF-8 length without encoding, so packFrames can size its one buffer first. Lone surrogates
// count 3 bytes because TextEncoder writes them as U+FFFD.
function measureUtf8(field: string, s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c < 0xdc00 && c >= 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  if (n > MAX_STRING_BYTES) {
    throw new InvalidFrameError(field, `${field} is ${n} UTF-8 bytes; shorten it to at most ${MAX_STRING_BYTES}`);
  }
  return n;
}

function writeUtf8(s: string, out: Uint8Array, pos: number, byteLen: number): number {
  if (byteLen === s.length) {
    for (let i = 0; i < byteLen; i++) out[pos + i] = s.charCodeAt(i);
  } else {
    encoder.encodeInto(s, out.subarray(pos, pos + byteLen));
  }
  return pos + byteLen;
}

function readUtf8(buf: Uint8Array, pos: number, len: number): string {
  try {
    return decoder.decode(buf.subarray(pos, pos + len));
  } catch (cause) {
    throw new CorruptSegmentError(`string at byte ${pos} is not valid UTF-8`, { cause });
  }
}

function readU16(buf: Uint8Array, pos: number): number {
  return buf[pos]! | (buf[pos + 1]! << 8);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Parses a hyphenated UUID (any case) into its 16 bytes. */
export function uuidToBytes(uuid: string): Uint8Array {
  if (!UUID_RE.test(uuid)) throw new InvalidFrameError('uuid', `"${uuid}" is not a hyphenated UUID`);
  const out = new Uint8Array(ID_BYTES);
  for (let i = 0, j = 0; i < ID_BYTES; i++, j += 2) {
    if (j === 8 || j === 13 || j === 18 || j === 23) j++;
    out[i] = parseInt(uuid.slice(j, j + 2), 16);
  }
  return out;
}

/** Formats 16 bytes as a lowercase hyphenated UUID. */
export function bytesToUuid(b: Uint8Array): string {
  checkId('uuid', b);
  let s = '';
  for (let i = 0; i < ID_BYTES; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += HEX[b[i]!];
  }
  return s;
}
