import { BoundedCache } from './bounded-cache.js';

describe('BoundedCache', () => {
  it('never holds more than its bound, evicting the least recently used', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('replaces, deletes and deletes by predicate', () => {
    const cache = new BoundedCache<string, { client: string }>(10);
    cache.set('t1', { client: 'x' });
    cache.set('t2', { client: 'y' });
    cache.set('t3', { client: 'x' });
    cache.set('t1', { client: 'z' });
    expect(cache.get('t1')).toEqual({ client: 'z' });
    cache.deleteWhere((v) => v.client === 'x');
    expect(cache.get('t3')).toBeUndefined();
    cache.delete('t2');
    expect(cache.size).toBe(1);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
