import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';

/** How many rows a list page asks the server for. */
export const LIST_PAGE = 50;

/** The answer of every paged admin list (`?limit=&pageToken=`, docs/api.md "Paging lists"). */
export interface ListPage<T> {
  data: T[];
  nextPageToken: string | null;
}

export interface PagedList<T> {
  /** The rows of every page read so far; null before the first answer. */
  items: T[] | null;
  pages: number;
  hasMore: boolean;
  error: Error | null;
  loading: boolean;
  loadMore: () => void;
  reload: () => void;
}

interface State<T> {
  pages: T[][] | null;
  next: string | null;
  error: Error | null;
  loading: boolean;
}

/**
 * A server-paged admin list bound to a component: the first page when `key` changes, the next one on
 * `loadMore` (appended, so a selected or edited row stays on screen), and on `reload` as many pages as were
 * shown, again from the first, each following the token of the answer before it — a token kept from before
 * a change could skip the rows the change added. An answer to a superseded read is dropped.
 */
export function usePagedList<T>(path: string, query: Record<string, string | undefined>, key: string): PagedList<T> {
  const [state, setState] = useState<State<T>>({ pages: null, next: null, error: null, loading: true });
  const latest = useRef(state);
  latest.current = state;
  const target = useRef({ path, query });
  target.current = { path, query };
  const running = useRef<AbortController | null>(null);

  const read = useCallback((from: T[][], token: string | undefined, count: number) => {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    setState((previous) => ({ ...previous, loading: true }));
    const { path: listPath, query: listQuery } = target.current;
    void (async () => {
      const pages = [...from];
      let cursor = token;
      let next: string | null = null;
      try {
        for (let done = 0; done < count; done++) {
          const page = await api<ListPage<T>>(listPath, { signal: controller.signal, query: { ...listQuery, limit: LIST_PAGE, pageToken: cursor } });
          pages.push(page.data);
          next = page.nextPageToken;
          if (next === null) break;
          cursor = next;
        }
        if (!controller.signal.aborted) setState({ pages, next, error: null, loading: false });
      } catch (failure) {
        const error = failure as Error;
        if (!controller.signal.aborted && error.name !== 'AbortError') setState((previous) => ({ ...previous, error, loading: false }));
      }
    })();
  }, []);

  useEffect(() => {
    setState({ pages: null, next: null, error: null, loading: true });
    read([], undefined, 1);
    return () => running.current?.abort();
  }, [key, read]);

  const loadMore = useCallback(() => {
    const { pages, next, loading } = latest.current;
    if (pages && next !== null && !loading) read(pages, next, 1);
  }, [read]);
  const reload = useCallback(() => read([], undefined, Math.max(1, latest.current.pages?.length ?? 1)), [read]);

  return {
    items: state.pages ? state.pages.flat() : null,
    pages: state.pages?.length ?? 0,
    hasMore: state.next !== null,
    error: state.error,
    loading: state.loading,
    loadMore,
    reload,
  };
}

/**
 * Every item of a list, for a picker that must offer all of them (the aliases a key may be granted, the
 * deployments a route may name): pages of the largest size, one request each, never one per item.
 */
export async function readWholeList<T>(path: string, signal: AbortSignal): Promise<T[]> {
  const items: T[] = [];
  for (let token: string | undefined; ;) {
    const page: ListPage<T> = await api<ListPage<T>>(path, { signal, query: { limit: 500, pageToken: token } });
    items.push(...page.data);
    if (page.nextPageToken === null) return items;
    token = page.nextPageToken;
  }
}
