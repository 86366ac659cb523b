import { type ErrorClass, GatewayError, ProviderError } from '../../canonical/index.js';
import { redactText } from '../../../src/kernel/index.js';
import { plausibleRequestId } from '../../providers/index.js';

/** Failures a caller can fix by changing the request: the only ones whose provider text helps them. */
const CLIENT_ATTRIBUTABLE: ReadonlySet<ErrorClass> = new Set(['invalid_request', 'context_length', 'content_policy']);
/** Statuses with which a provider blames the request itself (a 404 names the deployment's model or path, not the caller's). */
const CLIENT_STATUSES: ReadonlySet<number> = new Set([400, 413, 422]);

/**
 * What a client may read about a failed provider call (DESIGN §10). The provider's own words, already
 * redacted when the error was built and redacted again here, only for errors the caller caused; for
 * authentication, server-side and transport failures the caller gets our own wording and the provider's
 * request id, which is what the provider's support needs and all that is safe to pass on.
 */
export function providerErrorMessageForClient(error: ProviderError): string {
  const requestId = plausibleRequestId(error.providerRequestId) ? ` (provider request id: ${error.providerRequestId})` : '';
  if (error.errorClass === 'auth') return `The gateway could not authenticate with the provider${requestId}.`;
  if (isClientAttributable(error) && error.providerMessage) {
    return `${error.message}: ${redactText(error.providerMessage)}${requestId}`;
  }
  return `${error.message}${requestId}`;
}

/**
 * The gateway's own answer after failed attempts (503 all providers unavailable, 429), naming the last
 * provider request id when there is one: provider text never goes with it, the id does.
 */
export function withProviderRequestId(answer: GatewayError, lastError: ProviderError | null): GatewayError {
  const id = lastError?.providerRequestId;
  if (!plausibleRequestId(id)) return answer;
  // The detail's keys are the gateway's own; Object.assign keeps their order (the client reads it) and skips a null detail.
  return new GatewayError(answer.status, answer.code, `${answer.message} Last provider request id: ${id}.`, answer.param, answer.headers, Object.assign({}, answer.detail, {
    provider_request_id: id,
  }));
}

export function isClientAttributable(error: ProviderError): boolean {
  return CLIENT_ATTRIBUTABLE.has(error.errorClass) && (error.httpStatus === null || CLIENT_STATUSES.has(error.httpStatus));
}
