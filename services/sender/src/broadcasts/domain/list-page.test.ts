import { describe, expect, it } from '@jest/globals';
import { pageOfList } from './list-page.ts';

const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
const ids = (page: { data: { id: string }[]; hasMore: boolean }) => [page.data.map((item) => item.id), page.hasMore];

describe('pageOfList', () => {
  it('pages forward from the start or after an item, `limit` at a time (the default without one)', () => {
    expect(ids(pageOfList(items, {}, 3))).toEqual([['a', 'b', 'c'], true]);
    expect(ids(pageOfList(items, {}, 20))).toEqual([['a', 'b', 'c', 'd', 'e'], false]);
    expect(ids(pageOfList(items, { limit: 2, after: 'b' }, 20))).toEqual([['c', 'd'], true]);
    expect(ids(pageOfList(items, { limit: 2, after: 'c' }, 20))).toEqual([['d', 'e'], false]);
    expect(ids(pageOfList(items, { after: 'e' }, 20))).toEqual([[], false]);
  });

  it('pages back before an item, and gives nothing for a cursor that names no item', () => {
    expect(ids(pageOfList(items, { limit: 2, before: 'e' }, 20))).toEqual([['c', 'd'], true]);
    expect(ids(pageOfList(items, { limit: 2, before: 'b' }, 20))).toEqual([['a'], false]);
    expect(ids(pageOfList(items, { before: 'a' }, 20))).toEqual([[], false]);
    expect(ids(pageOfList(items, { after: 'zz' }, 20))).toEqual([[], false]);
    expect(ids(pageOfList(items, { before: 'zz' }, 20))).toEqual([[], false]);
  });
});
