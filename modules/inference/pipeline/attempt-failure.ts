import { GatewayFault } from '../../canonical/gateway-fault.js';
import { ProviderError } from '../../canonical/provider-error.js';

/**
 * Why an attempt failed, as a typed provider error — or, when the gateway itself failed before
 * anything was sent upstream, a GatewayFault thrown to the pipeline. The abort reason (a deadline, a
 * disconnect) wins over whatever the aborted call threw. After dispatch, an answer the adapter could
 * not read is the provider's malformed response.
 */
export function attemptFailure(error: unknown, signal: AbortSignal, dispatched: boolean): ProviderError {
  if (signal.aborted && signal.reason instanceof ProviderError) return signal.reason;
  if (error instanceof ProviderError) return error;
  if (error instanceof GatewayFault) throw error;
  if (!dispatched) throw new GatewayFault(error);
  return new ProviderError('malformed_response', 'the provider answer could not be read');
}
