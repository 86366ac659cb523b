import type { AttemptOutcome } from '../../../events/index.js';
import type { ProviderError } from '../../canonical/index.js';
import { deadlineOf } from './deadlines.js';
import type { HealthSignal } from './circuit-breaker.js';

/**
 * What an attempt says about the deployment's health. Failures the caller caused (a bad request, a
 * content policy, a disconnect, a slow reader), rate limits (handled by the retry-after throttle) and
 * the request's own overall deadlines say nothing about the provider and leave the breaker alone.
 */
export function healthSignal(outcome: AttemptOutcome, error: ProviderError | null): HealthSignal {
  if (outcome === 'success') return 'success';
  if (!error) return 'neutral';
  const deadline = deadlineOf(error);
  if (deadline === 'request' || deadline === 'stream' || deadline === 'write_progress') return 'neutral';
  switch (error.errorClass) {
    case 'transient':
    case 'timeout':
    case 'connection':
    case 'malformed_response':
    case 'answer_too_large':
    case 'overloaded':
    case 'unknown':
    case 'auth':
      return 'failure';
    default:
      return 'neutral';
  }
}
