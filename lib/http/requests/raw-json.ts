// A strict JSON parser (RFC 8259) that keeps chosen member values as their exact source text. Push
// stores each payload byte for byte as the client sent it (docs/semantics.md#names-and-limits),
// which JSON.parse cannot give back: 2^53+1 rounds, 1.0 becomes 1, whitespace is lost. One pass
// validates the whole body, builds the envelope and, for a captured member, only checks its grammar
// and slices its span.
import { badRequest } from '../../errors.js';

/** A JSON value kept as the exact text the client sent. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type JsonPath = readonly (string | number)[];

export interface RawJsonOptions {
  /** Member name whose values are kept as RawJson, e.g. 'payload'. */
  member: string;
  /** Which occurrences to keep; `path` is the path of the object holding the member. Default: all. */
  where?: (path: JsonPath) => boolean;
}

// Built (non-captured) values nest at most this deep; captured values are skipped iteratively.
const MAX_BUILD_DEPTH = 512;

/** Parses `text`; throws a 400 `invalid_json` naming the line and column of the first error. */
export function parseJsonRaw(text: string, options: RawJsonOptions): unknown {
  const scanner = new Scanner(text, options);
  scanner.ws();
  const value = scanner.value(0);
  scanner.ws();
  if (scanner.pos < text.length) scanner.fail('unexpected data after the JSON value');
  return value;
}

class Scanner {
  pos = 0;
  private readonly path: (string | number)[] = [];

  constructor(
    private readonly text: string,
    private readonly options: RawJsonOptions,
  ) {}

  ws(): void {
    const t = this.text;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  value(depth: number): unknown {
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    return this.scalar(c);
  }

  private scalar(c: number): unknown {
    if (c === 0x22) return this.string();
    if (c === 0x74) return this.literal('true', true);
    if (c === 0x66) return this.literal('false', false);
    if (c === 0x6e) return this.literal('null', null);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = this.pos;
      this.number();
      return Number(this.text.slice(start, this.pos));
    }
    return this.fail(Number.isNaN(c) ? 'unexpected end of input' : `unexpected ${this.describe()}`);
  }

  private object(depth: number): Record<string, unknown> {
    if (depth > MAX_BUILD_DEPTH) this.fail(`nested deeper than ${MAX_BUILD_DEPTH} levels`);
    const out: Record<string, unknown> = {};
    this.pos++;
    this.ws();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return out;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail(`expected a member name in double quotes, found ${this.describe()}`);
      const key = this.string();
      this.ws();
      this.expect(0x3a, '":" after a member name');
      this.ws();
      let v: unknown;
      if (key === this.options.member && (!this.options.where || this.options.where(this.path))) {
        const start = this.pos;
        this.skipValue();
        v = new RawJson(this.text.slice(start, this.pos));
      } else {
        this.path.push(key);
        v = this.value(depth);
        this.path.pop();
      }
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
      else out[key] = v;
      this.ws();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x2c) {
        this.ws();
        continue;
      }
      if (c === 0x7d) return out;
      this.pos--;
      this.fail(`expected "," or "}" in an object, found ${this.describe()}`);
    }
  }

  private array(depth: number): unknown[] {
    if (depth > MAX_BUILD_DEPTH) this.fail(`nested deeper than ${MAX_BUILD_DEPTH} levels`);
    const out: unknown[] = [];
    this.pos++;
    this.ws();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.path.push(out.length);
      out.push(this.value(depth));
      this.path.pop();
      this.ws();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x2c) {
        this.ws();
        continue;
      }
      if (c === 0x5d) return out;
      this.pos--;
      this.fail(`expected "," or "]" in an array, found ${this.describe()}`);
    }
  }

  // Validates one value without building it; containers tracked on an explicit stack so any
  // nesting depth a client sends in a payload is fine.
  private skipValue(): void {
    const stack: number[] = [];
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (c === 0x7b || c === 0x5b) {
        this.pos++;
        this.ws();
        const close = c === 0x7b ? 0x7d : 0x5d;
        if (this.text.charCodeAt(this.pos) === close) {
          this.pos++;
        } else {
          stack.push(close);
          if (close === 0x7d) this.memberName();
          continue;
        }
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        this.number();
      } else {
        this.scalar(c);
      }
      // After a complete value: close containers or move to the next element.
      for (;;) {
        if (stack.length === 0) return;
        this.ws();
        const close = stack[stack.length - 1]!;
        const d = this.text.charCodeAt(this.pos);
        if (d === 0x2c) {
          this.pos++;
          this.ws();
          if (close === 0x7d) this.memberName();
          break;
        }
        if (d === close) {
          this.pos++;
          stack.pop();
          continue;
        }
        this.fail(`expected "," or "${close === 0x7d ? '}' : ']'}", found ${this.describe()}`);
      }
    }
  }

  private memberName(): void {
    if (this.text.charCodeAt(this.pos) !== 0x22) this.fail(`expected a member name in double quotes, found ${this.describe()}`);
    this.string();
    this.ws();
    this.expect(0x3a, '":" after a member name');
    this.ws();
  }

  private string(): string {
    const t = this.text;
    const start = ++this.pos;
    let p = start;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x22) {
        this.pos = p + 1;
        return t.slice(start, p);
      }
      if (c === 0x5c || c < 0x20 || Number.isNaN(c)) break;
      p++;
    }
    let out = t.slice(start, p);
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x22) {
        this.pos = p + 1;
        return out;
      }
      if (c === 0x5c) {
        this.pos = p;
        out += this.escape();
        p = this.pos;
        continue;
      }
      this.checkStringChar(c, p);
      out += t[p];
      p++;
    }
  }

  private checkStringChar(c: number, p: number): void {
    if (Number.isNaN(c)) {
      this.pos = p;
      this.fail('unterminated string');
    }
    if (c < 0x20) {
      this.pos = p;
      this.fail('control character in a string; escape it (\\n, \\t, \\u00XX)');
    }
  }

  // At a backslash: consumes the escape and returns the character(s) it stands for.
  private escape(): string {
    const t = this.text;
    const c = t.charCodeAt(this.pos + 1);
    this.pos += 2;
    switch (c) {
      case 0x75: {
        const hex = t.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          this.pos -= 2;
          this.fail('\\u must be followed by four hex digits');
        }
        this.pos += 4;
        return String.fromCharCode(parseInt(hex, 16));
      }
      default: {
        const simple = SIMPLE_ESCAPES[c];
        if (simple === undefined) {
          this.pos -= 2;
          this.fail('invalid escape in a string');
        }
        return simple;
      }
    }
  }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  private number(): void {
    const t = this.text;
    let p = this.pos;
    if (t.charCodeAt(p) === 0x2d) p++;
    const first = t.charCodeAt(p);
    if (first === 0x30) p++;
    else if (first >= 0x31 && first <= 0x39) p = digits(t, p);
    else return this.failAt(p, 'a number needs a digit after "-"');
    if (t.charCodeAt(p) === 0x2e) {
      const q = digits(t, p + 1);
      if (q === p + 1) return this.failAt(p, 'a number needs digits after "."');
      p = q;
    }
    const e = t.charCodeAt(p);
    if (e === 0x65 || e === 0x45) {
      p++;
      const s = t.charCodeAt(p);
      if (s === 0x2b || s === 0x2d) p++;
      const q = digits(t, p);
      if (q === p) return this.failAt(p, 'a number needs digits in its exponent');
      p = q;
    }
    const next = t.charCodeAt(p);
    if (next >= 0x30 && next <= 0x39) return this.failAt(p, 'numbers must not have leading zeros');
    this.pos = p;
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(`unexpected ${this.describe()}`);
    this.pos += word.length;
    return value;
  }

  private expect(code: number, what: string): void {
    if (this.text.charCodeAt(this.pos) !== code) this.fail(`expected ${what}, found ${this.describe()}`);
    this.pos++;
  }

  private describe(): string {
    if (this.pos >= this.text.length) return 'end of input';
    return JSON.stringify(String.fromCodePoint(this.text.codePointAt(this.pos)!));
  }

  private failAt(pos: number, why: string): never {
    this.pos = pos;
    return this.fail(why);
  }

  fail(why: string): never {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < this.pos && i < this.text.length; i++) {
      if (this.text.charCodeAt(i) === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    throw badRequest(
      'invalid_json',
      `Request body is not valid JSON: ${why} at line ${line}, column ${this.pos - lineStart + 1}; ` +
        'send strict JSON (no comments, no trailing commas).',
    );
  }
}

const SIMPLE_ESCAPES: Record<number, string> = {
  0x22: '"',
  0x5c: '\\',
  0x2f: '/',
  0x62: '\b',
  0x66: '\f',
  0x6e: '\n',
  0x72: '\r',
  0x74: '\t',
};

function digits(t: string, p: number): number {
  for (;;) {
    const c = t.charCodeAt(p);
    if (c >= 0x30 && c <= 0x39) p++;
    else return p;
  }
}
