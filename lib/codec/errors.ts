// Codec errors carry a stable `code` so the one place that maps errors to HTTP responses can
// tell them apart without importing this module's classes.

export class CodecError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A frame cannot be packed as given (field too long, id not 16 bytes, body over 4 GiB). */
export class InvalidFrameError extends CodecError {
  readonly field: string;

  constructor(field: string, message: string) {
    super('invalid_frame', message);
    this.field = field;
  }
}

/** A stored segment blob does not decode to the frames it must hold: never serve it. */
export class CorruptSegmentError extends CodecError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('corrupt_segment', `${message}; the segment blob cannot be trusted: restore it or drop the segment`, options);
  }
}
