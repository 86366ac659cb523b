import { GatewayError, ProviderError } from '../../canonical/index.js';
import { GatewayFault } from './gateway-fault.js';

/**
 * Whose failure an attempt's exception is. The provider's side of a call is what an adapter classified
 * as a ProviderError (a status, a broken connection, a malformed answer it recognised) and the abort
 * reason (a deadline, a disconnect), which wins. Anything else was raised by the gateway: a GatewayError
 * about the request (the caller's 4xx), or an unexpected exception, such as a stack overflow while
 * building the upstream request or a translator's bug, which is our own 500. Only the provider's side
 * may feed a breaker or lead to another attempt.
 */
export function attemptFailure(error: unknown, signal: AbortSignal): ProviderError | GatewayFault {
  if (signal.aborted && signal.reason instanceof ProviderError) return signal.reason;
  if (error instanceof ProviderError || error instanceof GatewayFault) return error;
  if (error instanceof GatewayError) return new GatewayFault(error, error);
  return GatewayFault.internal(error);
}
