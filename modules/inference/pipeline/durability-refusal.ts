import { SpoolFullError } from '../../../src/kernel/index.js';
import { GatewayError } from '../../canonical/index.js';

/**
 * What the client gets when a finished answer's events could not be made durable (DESIGN §7): the answer
 * is withheld, because an unbilled answer must not be delivered. A full outage spool says so by its own
 * code, so an operator can tell "PostgreSQL down for too long" from any other failure.
 */
export function durabilityRefusal(error: unknown, delivered: 'buffered' | 'stream'): GatewayError {
  const notDelivered = delivered === 'buffered' ? ' it was not delivered.' : '';
  if (error instanceof SpoolFullError) {
    return new GatewayError(
      503, 'event_spool_full',
      `The event store is unreachable and this node's outage spool is full, so the answer could not be recorded durably;${notDelivered} Retry later.`,
    );
  }
  return new GatewayError(503, 'durability_unavailable', `The answer could not be recorded durably;${notDelivered} Retry the request.`);
}

/** Under the strict profile RequestAdmitted must be durable before the first provider call; when it is not, nothing is sent. */
export function admissionRefusal(error: unknown): GatewayError {
  if (error instanceof SpoolFullError) {
    return new GatewayError(
      503, 'event_spool_full',
      "The event store is unreachable and this node's outage spool is full, so the request could not be recorded before it is sent; nothing was sent. Retry later.",
    );
  }
  return new GatewayError(503, 'durability_unavailable', 'The request could not be recorded durably before it is sent; nothing was sent. Retry the request.');
}
