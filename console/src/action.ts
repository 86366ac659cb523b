import { useState } from 'preact/hooks';

export interface Action<Label extends string> {
  /** Whether something is running. */
  busy: boolean;
  /** What is running (the label it was started with), or null. */
  running: Label | null;
  /** The last run's failure, shown by ErrorNotice; cleared when the next run starts. */
  error: unknown;
  setError: (error: unknown) => void;
  /** Runs `work` (one at a time by the page's own buttons: they are disabled while busy), keeping its failure. */
  run: (work: () => Promise<void>, label?: Label) => Promise<void>;
}

/** A change a form or a button asks of the server: busy while it runs, its failure kept to show. */
export function useAction<Label extends string = 'busy'>(initialError: unknown = null): Action<Label> {
  const [running, setRunning] = useState<Label | null>(null);
  const [error, setError] = useState<unknown>(initialError);
  const run = async (work: () => Promise<void>, label = 'busy' as Label) => {
    setRunning(label);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setRunning(null);
    }
  };
  return { busy: running !== null, running, error, setError, run };
}
