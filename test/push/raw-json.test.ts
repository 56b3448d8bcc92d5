import { describe, expect, it } from 'vitest';
import { QueenError } from '../../lib/errors.js';
import { parseJsonRaw, RawJson, type JsonPath } from '../../lib/http/requests/raw-json.js';

const items = (path: JsonPath) => path.length === 2 && path[0] === 'items';
const parse = (text: string) => parseJsonRaw(text, { member: 'payload', where: items });
const parseAll = (text: string) => parseJsonRaw(text, { member: 'payload' });
const payloads = (text: string) => (parse(text) as { items: { payload: RawJson }[] }).items.map((i) => i.payload.text);

function rejects(text: string): QueenError {
  try {
    parseAll(text);
  } catch (err) {
    expect(err).toBeInstanceOf(QueenError);
    expect((err as QueenError).status).toBe(400);
    expect((err as QueenError).code).toBe('invalid_json');
    return err as QueenError;
  }
  throw new Error(`accepted ${JSON.stringify(text)}`);
}

describe('the raw JSON scanner', () => {
  it('parses ordinary JSON exactly like JSON.parse', () => {
    const samples = [
      '{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":-0.5e-3,"g":"","h":[],"i":{}}',
      '[1, 2 , 3]',
      ' "x" ',
      '0',
      '-0',
      '1E+2',
      '{"s":"tab\\tnew\\nline \\"quoted\\" \\\\ \\/ \\b\\f\\r \\u00e9\\u20AC \\ud83d\\ude00"}',
      '{"unicode":"héllo wörld 日本 😀"}',
      '{"dup":1,"dup":2}',
    ];
    for (const s of samples) expect(parseAll(s)).toEqual(JSON.parse(s));
  });

  it('keeps a payload as the exact source text, numbers and whitespace included', () => {
    const body =
      '{"items":[{"queue":"q","payload":12345678901234567890123},{"payload":1.0},{"payload": { "a" : [ 1 , 2 ] } },{"payload":-0.000e+00}]}';
    expect(payloads(body)).toEqual(['12345678901234567890123', '1.0', '{ "a" : [ 1 , 2 ] }', '-0.000e+00']);
  });

  it('is not fooled by quotes, brackets and escapes inside payload strings', () => {
    const inner = '{"s":"a \\"quoted\\" ] } [ { , : \\\\","t":["\\u005d","]}"],"n":{"payload":"nested"}}';
    const body = `{"items":[{"payload":${inner},"queue":"after"},{"payload":"\\\\"}]}`;
    const parsed = parse(body) as { items: { payload: RawJson; queue?: string }[] };
    expect(parsed.items[0]!.payload.text).toBe(inner);
    expect(JSON.parse(parsed.items[0]!.payload.text)).toEqual(JSON.parse(inner));
    expect(parsed.items[0]!.queue).toBe('after');
    expect(parsed.items[1]!.payload.text).toBe('"\\\\"');
  });

  it('keeps payloads of every JSON type, including null and empty containers', () => {
    expect(
      payloads('{"items":[{"payload":null},{"payload":{}},{"payload":[]},{"payload":"s"},{"payload":true},{"payload":false}]}'),
    ).toEqual(['null', '{}', '[]', '"s"', 'true', 'false']);
  });

  it('captures only where told: a payload key elsewhere is an ordinary value', () => {
    const parsed = parse('{"payload":{"x":1},"items":[{"meta":{"payload":2},"payload":3}]}') as any;
    expect(parsed.payload).toEqual({ x: 1 });
    expect(parsed.items[0].meta.payload).toBe(2);
    expect(parsed.items[0].payload).toBeInstanceOf(RawJson);
  });

  it('accepts payloads nested far deeper than the envelope limit', () => {
    const deep = '['.repeat(20000) + ']'.repeat(20000);
    expect(payloads(`{"items":[{"payload":${deep}}]}`)).toEqual([deep]);
  });

  it('validates the payload as strictly as the envelope', () => {
    for (const bad of [
      '{"items":[{"payload":[1,]}]}',
      '{"items":[{"payload":{"a" 1}}]}',
      '{"items":[{"payload":01}]}',
      '{"items":[{"payload":"\\x"}]}',
      '{"items":[{"payload":[}]}',
    ]) {
      expect(() => parse(bad)).toThrow(QueenError);
    }
  });

  it('rejects everything that is not strict JSON', () => {
    const bad = [
      '',
      ' ',
      '{',
      '}',
      '[1,]',
      '{"a":1,}',
      '{a:1}',
      "{'a':1}",
      '01',
      '1.',
      '.5',
      '1e',
      '+1',
      '-',
      'NaN',
      'Infinity',
      'tru',
      'nul',
      '"unterminated',
      '"bad \\x escape"',
      '"\\u12G4"',
      '"raw\nnewline"',
      '"tab\there"',
      '[1 2]',
      '{"a":1 "b":2}',
      '1 2',
      '{} x',
      '// c\n1',
      '/* c */ 1',
      '[1]]',
      '\u00a01',
      '{"a":1}\u0000',
    ];
    for (const s of bad) rejects(s);
  });

  it('says where the error is', () => {
    expect(rejects('{\n  "a": [1, 2,]\n}').message).toMatch(/line 2, column 14/);
    expect(rejects('{"a":1').message).toMatch(/end of input/);
  });

  it('survives a __proto__ key without touching the prototype', () => {
    const v = parseAll('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect((v as any).polluted).toBeUndefined();
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
  });

  it('agrees with JSON.parse on random documents', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const gen = (d: number): unknown => {
      const r = rnd();
      if (d > 4 || r < 0.3)
        return [null, true, false, rnd() * 1e6 - 5e5, Math.floor(rnd() * 1e9), 'ü"\\\n\u0001x'.slice(0, Math.floor(rnd() * 7))][
          Math.floor(rnd() * 6)
        ];
      if (r < 0.65) return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(d + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => [`k${i}"]`, gen(d + 1)]));
    };
    for (let i = 0; i < 300; i++) {
      const doc = { items: [{ payload: gen(0), queue: 'q' }], other: gen(0) };
      const text = JSON.stringify(doc, null, i % 2 ? 2 : undefined);
      const parsed = parse(text) as any;
      expect(JSON.parse(parsed.items[0].payload.text)).toEqual(doc.items[0]!.payload);
      expect(parsed.other).toEqual(JSON.parse(text).other);
    }
  });
});
