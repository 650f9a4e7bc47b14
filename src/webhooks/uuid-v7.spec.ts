import { UUID_PATTERN, uuidv7 } from './uuid-v7.js';

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID carrying the time', () => {
    const id = uuidv7(0x0123456789ab);
    expect(id).toMatch(UUID_PATTERN);
    expect(id.slice(0, 13)).toBe('01234567-89ab');
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('sorts in creation order, even many in one millisecond or with a clock going back', () => {
    const now = Date.now() + 60_000;
    const ids = [
      ...Array.from({ length: 5000 }, () => uuidv7(now)),
      uuidv7(now - 1000),
      uuidv7(now + 5),
    ];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
