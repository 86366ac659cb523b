import { GatewayError } from '../../canonical/index.js';

/**
 * A failure of the gateway itself during an attempt: building the upstream request, translating an
 * answer, a resource limit, a bug. It says nothing about the deployment, so it never feeds a breaker and
 * is never retried or tried on another deployment; the caller gets `error`, a 4xx the gateway raised
 * about the request or a 500 of our own.
 */
export class GatewayFault extends Error {
  override readonly name = 'GatewayFault';

  constructor(
    readonly error: GatewayError,
    cause: unknown,
  ) {
    super(error.message, { cause });
  }

  /** An unexpected exception of ours: the caller gets a plain 500, the log gets the stack. */
  static internal(cause: unknown): GatewayFault {
    return new GatewayFault(
      new GatewayError(500, 'internal_error', 'The gateway failed unexpectedly. The incident was logged; retry the request.'),
      cause,
    );
  }

  /** Whether the operator needs to see it (a 4xx about the request is the caller's business). */
  get isOurs(): boolean {
    return this.error.status >= 500;
  }

  /** The stack of what went wrong, for the log: exception names and code locations, never request content. */
  describeCause(): string {
    const cause = this.cause as Error | undefined;
    return cause?.stack ?? cause?.message ?? String(cause);
  }
}
