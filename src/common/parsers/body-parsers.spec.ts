import fc from 'fast-check';
import { BodyParseError, parseForm, parseJson, repeatedKeys } from './body-parsers.js';

const POISONED =
  'The request body contains a forbidden "__proto__" or "constructor.prototype" key.';

const repeatsIn = (text: string) =>
  [...repeatedKeys(parseJson(text, { findRepeatedKeys: true }))].sort();

/** Every character as a \uXXXX escape: the same key to JSON.parse, other text to a scan. */
const escapeAll = (key: string) =>
  `"${[...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;

describe('parseJson({ findRepeatedKeys: true })', () => {
  it.each([
    ['no repeat', '{"a":1,"b":2}', []],
    ['a plain repeat', '{"a":1,"b":2,"a":3}', ['a']],
    ['a repeat spelled with escapes', '{"scope":"x","\\u0073cope":"y"}', ['scope']],
    ['the same value twice', '{"a":"x","a":"x"}', ['a']],
    ['an empty key twice', '{"":1,"":2}', ['']],
    ['repeats below the top level (not looked for)', '{"a":{"b":1,"b":2},"c":[{"d":1,"d":2}]}', []],
    ['a value naming another key', '{"a":"b","b":"a"}', []],
    ['quotes, braces and commas inside strings', '{"a\\"":"},\\"a\\":{","a":"[","a\\"":1}', ['a"']],
    ['whitespace around every token', ' {\n "a" : 1 ,\t"a" : [ ] } ', ['a']],
  ])('%s', (_case, text, expected) => {
    expect(repeatsIn(text)).toEqual(expected);
  });

  it('notes nothing for a body that is not an object', () => {
    expect(repeatedKeys(parseJson('[{"a":1,"a":2}]', { findRepeatedKeys: true })).size).toBe(0);
    expect(repeatedKeys(parseJson('"a"', { findRepeatedKeys: true })).size).toBe(0);
  });

  it('finds exactly the repeated top-level keys, however they are spelled (property)', () => {
    const key = fc.string({ maxLength: 3 }).filter((k) => k !== '__proto__');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 3 }), fc.boolean()), { maxLength: 8 }),
        (members) => {
          const text = `{${members
            .map(
              ([k, v, escaped]) =>
                `${escaped ? escapeAll(k) : JSON.stringify(k)}:${JSON.stringify(v)}`,
            )
            .join(',')}}`;
          let parsed: unknown;
          try {
            parsed = parseJson(text, { findRepeatedKeys: true });
          } catch (error) {
            // Only prototype keys in a generated value (`constructor.prototype`) are refused.
            expect((error as BodyParseError).message).toBe(POISONED);
            return;
          }
          const counts = new Map<string, number>();
          for (const [k] of members) counts.set(k, (counts.get(k) ?? 0) + 1);
          const expected = [...counts].filter(([, n]) => n > 1).map(([k]) => k);
          expect([...repeatedKeys(parsed)].sort()).toEqual(expected.sort());
          expect(parsed).toEqual(JSON.parse(text));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('parseJson without findRepeatedKeys (every route but /oauth)', () => {
  it('notes no repeats and parses as before: the last value wins', () => {
    const parsed = parseJson('{"a":1,"a":2}');
    expect(parsed).toEqual({ a: 2 });
    expect(repeatedKeys(parsed).size).toBe(0);
    expect(Object.getOwnPropertySymbols(parsed)).toEqual([]);
  });
});

describe('parseJson and numbers beyond a double', () => {
  const TOO_LARGE = new BodyParseError(
    'The request body is malformed: it holds a number too large for a double (over 1.8e308).',
  );

  it.each([
    '{"a":1e400}',
    '{"a":[-2e308]}',
    '{"a":{"b":1E+309}}',
    `{"a":1${'0'.repeat(309)}}`,
    // Few exponent digits, many integer digits: together past the range.
    `{"a":2${'0'.repeat(300)}e9}`,
    `{"a":${'9'.repeat(308)}.9e1}`,
    `{"a":-1${'0'.repeat(250)}e60}`,
    `{"a":2${'0'.repeat(209)}e99}`,
  ])('refuses %s (it would be stored as null)', (text) => {
    expect(() => parseJson(text)).toThrow(TOO_LARGE);
  });

  it.each([
    ['{"a":1.7e308}', { a: 1.7e308 }],
    [`{"a":1${'0'.repeat(299)}e8}`, { a: 1e307 }],
    [`{"a":0.${'9'.repeat(400)}e10}`, { a: 1e10 }],
    ['{"a":1e-400}', { a: 0 }],
    ['{"a":"1e400"}', { a: '1e400' }],
    [`{"a":"${'9'.repeat(400)}"}`, { a: '9'.repeat(400) }],
  ])('takes %s', (text, value) => {
    expect(parseJson(text)).toEqual(value);
  });

  it('looks for long runs of digits in one pass: a 1 MiB body of 308-digit numbers is taken, one of 309 refused', () => {
    // The check once tried every digit as a run's start: 1.2 s for such a body, before the token
    // was looked at. Its answers are pinned here; the single pass is in MAYBE_OUT_OF_RANGE.
    const runs = Array<string>(3300).fill('1'.repeat(308));
    const parsed = parseJson(`[${runs.join(',')}]`) as number[];
    expect(parsed).toHaveLength(3300);
    expect(parsed.every(Number.isFinite)).toBe(true);
    runs[3299] = '9'.repeat(309);
    expect(() => parseJson(`[${runs.join(',')}]`)).toThrow(TOO_LARGE);
  });
});

describe('parseForm', () => {
  it('makes a repeated parameter an array, and keeps prototype-named keys as plain keys', () => {
    const form = parseForm('a=1&a=2&constructor=3&toString=4&prototype=5');
    expect(form).toEqual({
      a: ['1', '2'],
      constructor: '3',
      toString: '4',
      prototype: '5',
    });
    expect(repeatedKeys(form)).toEqual(new Set(['a']));
    expect(repeatedKeys(parseForm('a=1&b=2'))).toEqual(new Set());
  });

  it('takes a 1 MiB body of one repeated key in one pass (it was quadratic: minutes of CPU)', () => {
    const parsed = parseForm(`x=1${'&x=1'.repeat(262_143)}`);
    expect(parsed.x).toHaveLength(262_144);
    expect(new Set(parsed.x)).toEqual(new Set(['1']));
  });

  it.each([
    '__proto__=1',
    '%5F%5Fproto%5F%5F=1',
    'a=1&__proto__[admin]=1',
    'a[__proto__]=1',
    'constructor[prototype]=1',
    'constructor%5Bprototype%5D%5Badmin%5D=1',
  ])('refuses %s as a JSON body would (400)', (body) => {
    expect(() => parseForm(body)).toThrow(new BodyParseError(POISONED));
  });
});
