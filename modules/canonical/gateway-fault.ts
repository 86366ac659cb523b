/**
 * The gateway failed on its own while preparing an upstream call (building or translating the request,
 * a resource limit): nothing was sent, so the provider is not to blame. It is a 500 of ours, is never
 * retried on another deployment and never counts against a deployment's breaker.
 */
export class GatewayFault extends Error {
  override readonly name = 'GatewayFault';
  constructor(readonly failure: unknown) {
    super(failure instanceof Error ? failure.message : String(failure));
  }
}
