import { ProviderError } from '../../canonical/provider-error.js';

/**
 * An attempt's AbortController, linked to its request's: the client going away or a request deadline
 * aborts the attempt (with the request's reason), while an attempt deadline aborts only the attempt.
 */
export function linkedAbort(parent: AbortSignal): AbortController & { dispose: () => void } {
  const controller = new AbortController() as AbortController & { dispose: () => void };
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  controller.dispose = () => parent.removeEventListener('abort', onAbort);
  return controller;
}

/** Why an attempt failed, as a typed error: the abort reason (a deadline, a disconnect) wins. */
export function asProviderError(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted && signal.reason instanceof ProviderError) return signal.reason;
  if (error instanceof ProviderError) return error;
  return new ProviderError('unknown', 'the provider call failed unexpectedly');
}

/** The first value of a header that may repeat. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
