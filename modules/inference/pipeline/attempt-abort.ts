import { AbortScope } from '../../../src/kernel/index.js';

/**
 * An attempt's abort (an AbortScope), linked to its request's: the client going away or a request deadline
 * aborts the attempt (with the request's reason), while an attempt deadline aborts only the attempt.
 * Only an attempt with deadlines of its own (a stream's TTFT and idle) needs one; a buffered attempt
 * takes the request's signal.
 */
export function linkedAbort(parent: AbortSignal): AbortScope & { dispose: () => void } {
  const controller = new AbortScope() as AbortScope & { dispose: () => void };
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  controller.dispose = () => parent.removeEventListener('abort', onAbort);
  return controller;
}
