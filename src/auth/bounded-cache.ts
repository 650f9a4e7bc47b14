/**
 * A least-recently-used map with a fixed number of entries, so that memory stays bounded however
 * many distinct keys callers present. A Map keeps insertion order: re-inserting on read moves an
 * entry to the back, and the front is the least recently used.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly maxEntries: number) {}

  get size() {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as K);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry for which `predicate` is true. */
  deleteWhere(predicate: (value: V, key: K) => boolean): void {
    for (const [key, value] of this.entries) if (predicate(value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
