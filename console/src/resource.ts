import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

/**
 * One server read bound to a component: re-run when `key` changes or on `reload`, an answer to an older
 * read (superseded while in flight) is dropped, and an interval refreshes it when `everyMs` is set.
 */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, key: string, everyMs?: number): Resource<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [generation, setGeneration] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () => {
      setState((previous) => ({ ...previous, loading: true }));
      loader.current(controller.signal).then(
        (data) => !controller.signal.aborted && setState({ data, error: null, loading: false }),
        (error: Error) => !controller.signal.aborted && error.name !== 'AbortError' && setState((previous) => ({ data: previous.data, error, loading: false })),
      ).finally(() => {
        if (everyMs && !controller.signal.aborted) timer = setTimeout(run, everyMs);
      });
    };
    run();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
  }, [key, generation, everyMs]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}
