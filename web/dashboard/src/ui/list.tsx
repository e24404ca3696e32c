// Paginated lists: the API's cursor pagination (`limit`, `after`, `before`, `has_more`) with the cursor and
// the filters kept in the page's URL, so a filtered page can be shared and survives a reload.
import type { FormEvent, ReactNode } from 'react';
import { useQuery, keepPreviousData } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { get, type Query } from '../api/client.ts';
import { ErrorMessage, Loading } from './feedback.tsx';

/** The search parameters of paging, not filters: the cursor and the page size. */
const PAGING = ['after', 'before', 'limit'];

export type ListPage<T> = { object: 'list'; has_more: boolean; data: T[] };

/** The URL's filter values (every search parameter but the cursor), and a setter that resets the cursor. */
export function useFilters(): [Record<string, string>, (next: Record<string, string>) => void] {
  const [params, setParams] = useSearchParams();
  const filters: Record<string, string> = {};
  for (const [key, value] of params) if (!PAGING.includes(key)) filters[key] = value;
  const set = (next: Record<string, string>) => {
    const clean = Object.fromEntries(Object.entries(next).filter(([, v]) => v !== ''));
    setParams(clean);
  };
  return [filters, set];
}

/**
 * A list's filter form: its fields (`children`, each with its URL value as default) and Clear and Filter.
 * Filter puts what `read` takes from the fields into the URL (the cursor reset); Clear empties it. Keyed on
 * the URL's filters, so the fields follow back and forward navigation.
 */
export function FilterForm({
  label,
  read,
  children,
}: {
  label: string;
  read: (data: FormData) => Record<string, string>;
  children: ReactNode;
}) {
  const [filters, setFilters] = useFilters();
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setFilters(read(new FormData(event.currentTarget)));
  };
  return (
    <form key={JSON.stringify(filters)} className="filters" aria-label={label} onSubmit={apply}>
      {children}
      <div className="actions">
        <button type="button" className="button" onClick={() => setFilters({})}>
          Clear
        </button>
        <button type="submit" className="button primary">
          Filter
        </button>
      </div>
    </form>
  );
}

/**
 * One page of a list route, at the cursor in the URL. `query` adds the route's filters; the page keeps the
 * previous data on screen while the next loads. `?limit=` in the URL (1 to 100) overrides the page size.
 * `refetchInterval` reads the page again that often (ms), for a list that grows while it is shown.
 */
export function useListPage<T extends { id: string }>(
  key: string,
  path: string,
  query: Query = {},
  pageSize = 50,
  refetchInterval?: number,
) {
  const [params] = useSearchParams();
  const after = params.get('after');
  const before = params.get('before');
  const asked = Number(params.get('limit'));
  const limit = Number.isInteger(asked) && asked >= 1 && asked <= 100 ? asked : pageSize;
  const result = useQuery({
    queryKey: [key, path, query, after, before, limit],
    queryFn: () => get<ListPage<T>>(path, { ...query, limit, after, before }),
    placeholderData: keepPreviousData,
    refetchInterval,
  });
  return { ...result, after, before };
}

/** Newer and Older links for a page of a list (newest first), keeping the other search parameters. */
export function Pager<T extends { id: string }>({
  page,
  after,
  before,
}: {
  page: ListPage<T> | undefined;
  after: string | null;
  before: string | null;
}) {
  const [params, setParams] = useSearchParams();
  if (!page || page.data.length === 0) return null;
  const first = page.data[0]!.id;
  const last = page.data[page.data.length - 1]!.id;
  // Paging backwards (before) answers has_more for what lies further back that way, so newer pages exist
  // when we came with `after`, or when `before` says there are more; older ones likewise the other way.
  const hasNewer = Boolean(after) || (Boolean(before) && page.has_more);
  const hasOlder = before ? true : page.has_more;
  const go = (cursor: 'after' | 'before', id: string) => {
    const next = new URLSearchParams(params);
    next.delete('after');
    next.delete('before');
    next.set(cursor, id);
    setParams(next);
  };
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="button small" disabled={!hasNewer} onClick={() => go('before', first)}>
        Newer
      </button>
      <button type="button" className="button small" disabled={!hasOlder} onClick={() => go('after', last)}>
        Older
      </button>
    </nav>
  );
}

/**
 * A list's body as every list page shows it: the error, a loading line, `empty` when the list has nothing,
 * or the table: its caption for screen readers, a heading per column (and one named only for them over the
 * rows' actions), busy while another page or filter loads with the previous rows still on screen.
 */
export function ListTable<T>({
  query,
  caption,
  columns,
  actions = false,
  empty,
  row,
}: {
  query: { error: unknown; isPending: boolean; isPlaceholderData: boolean; data?: { data: T[] } };
  caption: string;
  columns: string[];
  actions?: boolean;
  empty: ReactNode;
  /** One item's row (`<tr key=…>`): its first cell a row heading. */
  row: (item: T) => ReactNode;
}) {
  const items = query.data?.data;
  return (
    <>
      <ErrorMessage error={query.error} />
      {query.isPending ? <Loading /> : null}
      {items && items.length === 0 ? empty : null}
      {items && items.length > 0 ? (
        <div className="table-wrap" aria-busy={query.isPlaceholderData}>
          <table>
            <caption className="visually-hidden">{caption}</caption>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column} scope="col">
                    {column}
                  </th>
                ))}
                {actions ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>{items.map(row)}</tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
