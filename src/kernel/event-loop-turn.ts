import { setImmediate as nextImmediate } from 'node:timers/promises';

/**
 * Resolves on the event loop's next turn, after the I/O that is ready now has been handled: background
 * work that runs long on the serving node (a projection chaining a page of hundreds of events) awaits it
 * between slices, so the requests it shares the thread with are not held up for the whole of it; and
 * work that gathers what the current turn produces (the outage spool's writes) waits for it before acting.
 */
export function nextEventLoopTurn(): Promise<void> {
  return nextImmediate();
}
