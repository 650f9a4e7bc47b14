import type { PageRequest } from './page-query.dto.js';

/** What a paged route returns; the envelope interceptor (PaginationModule) sends toBody(). */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly total: number,
    readonly request: PageRequest,
  ) {}

  map<U>(fn: (item: T) => U): Page<U> {
    return new Page(this.items.map(fn), this.total, this.request);
  }

  /** The response body: `{data: [...], meta: {...}}` (docs/contract.md §7). */
  toBody(): { data: T[]; meta: PageMeta } {
    const { page, limit } = this.request;
    return { data: this.items, meta: pageMeta(this.total, page, limit, this.items.length) };
  }
}

export interface PageMeta {
  current_page: number;
  from: number | null;
  to: number | null;
  last_page: number;
  per_page: number;
  total: number;
}

/** docs/contract.md §7's arithmetic: positions (not ids), null on an empty page, last_page ≥ 1. */
export function pageMeta(total: number, page: number, limit: number, count: number): PageMeta {
  const from = count > 0 ? (page - 1) * limit + 1 : null;
  return {
    current_page: page,
    from,
    to: from === null ? null : from + count - 1,
    last_page: Math.max(1, Math.ceil(total / limit)),
    per_page: limit,
    total,
  };
}
