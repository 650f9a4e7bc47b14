import { RawJson, serializeReply } from './raw-json.js';

describe('RawJson and serializeReply', () => {
  it('splices stored JSON text in as it is, in document order', () => {
    const body = {
      data: [
        { id: 'a', payload: new RawJson('{"n":[1,2,{"x":null}]}') },
        { id: 'b', payload: new RawJson('{ "spaced" : true }') },
      ],
      meta: { total: 2 },
    };
    expect(serializeReply(body)).toBe(
      '{"data":[{"id":"a","payload":{"n":[1,2,{"x":null}]}},{"id":"b","payload":{ "spaced" : true }}],"meta":{"total":2}}',
    );
  });

  it('is JSON.stringify for a body without RawJson, NUL characters included', () => {
    const body = { message: 'a\u0000b', nested: { list: [1, '\u0000'] } };
    expect(serializeReply(body)).toBe(JSON.stringify(body));
  });

  it("cannot be fooled by a string that looks like the splice's mark", () => {
    const body = { last_error: '\u0000raw-json:', payload: new RawJson('{"a":1}') };
    expect(JSON.parse(serializeReply(body))).toEqual({
      last_error: '\u0000raw-json:',
      payload: { a: 1 },
    });
  });

  it('serializes as the value it holds anywhere else (logs, the CLI)', () => {
    expect(JSON.stringify({ payload: new RawJson('{"a":[1]}') })).toBe('{"payload":{"a":[1]}}');
  });

  it('leaves no state behind when a body cannot be serialized', () => {
    const cyclic: Record<string, unknown> = { payload: new RawJson('{}') };
    cyclic.self = cyclic;
    expect(() => serializeReply(cyclic)).toThrow(TypeError);
    expect(JSON.stringify({ payload: new RawJson('{"b":2}') })).toBe('{"payload":{"b":2}}');
  });
});
