import { pageMeta, PageMeta } from './page.js';

/**
 * An independent model of docs/contract.md §7: lay the records out, slice the page, read the positions.
 * It shares no arithmetic with pageMeta(), so a wrong formula cannot agree with itself.
 */
function modelMeta(total: number, page: number, limit: number): { meta: PageMeta; count: number } {
  const positions = Array.from({ length: total }, (_, i) => i + 1);
  const onPage = positions.slice((page - 1) * limit, page * limit);
  let lastPage = 1;
  while (lastPage * limit < total) lastPage++;
  return {
    count: onPage.length,
    meta: {
      current_page: page,
      from: onPage.length ? onPage[0] : null,
      to: onPage.length ? onPage[onPage.length - 1] : null,
      last_page: lastPage,
      per_page: limit,
      total,
    },
  };
}

const TOTALS = [0, 1, 14, 15, 16, 42, 100];
const LIMITS = [1, 10, 15, 100];

const cases = TOTALS.flatMap((total) =>
  LIMITS.flatMap((limit) => {
    const last = Math.max(1, Math.ceil(total / limit));
    const pages = new Map<number, string>([
      [1, 'first'],
      [Math.ceil((1 + last) / 2), 'middle'],
      [last, 'last'],
      [last + 1, 'past the end'],
    ]);
    return [...pages].map(([page, which]) => ({ total, limit, page, which }));
  }),
);

describe('pageMeta', () => {
  it.each(cases)('total $total, limit $limit, $which page ($page)', ({ total, limit, page }) => {
    const { meta, count } = modelMeta(total, page, limit);
    expect(pageMeta(total, page, limit, count)).toStrictEqual(meta);
  });

  it.each([
    // docs/contract.md §7's own example.
    [42, 2, 10, 10, { current_page: 2, from: 11, to: 20, last_page: 5, per_page: 10, total: 42 }],
    // A partly filled last page.
    [42, 5, 10, 2, { current_page: 5, from: 41, to: 42, last_page: 5, per_page: 10, total: 42 }],
    // An empty set still has one (empty) page.
    [0, 1, 15, 0, { current_page: 1, from: null, to: null, last_page: 1, per_page: 15, total: 0 }],
    // Past the end: the page asked for, no positions.
    [
      16,
      3,
      15,
      0,
      { current_page: 3, from: null, to: null, last_page: 2, per_page: 15, total: 16 },
    ],
    [
      100,
      100,
      1,
      1,
      { current_page: 100, from: 100, to: 100, last_page: 100, per_page: 1, total: 100 },
    ],
  ])('total %i, page %i, limit %i, %i rows → %j', (total, page, limit, count, expected) => {
    expect(pageMeta(total, page, limit, count)).toStrictEqual(expected);
  });

  it('covers first, middle, last and past-the-end pages of every total and limit', () => {
    const kinds = new Set(cases.map((c) => c.which));
    expect([...kinds].sort()).toEqual(['first', 'last', 'middle', 'past the end']);
    expect(new Set(cases.map((c) => `${c.total}/${c.limit}`)).size).toBe(
      TOTALS.length * LIMITS.length,
    );
  });
});
