import { GatewayError } from '../../canonical/index.js';
import { type ContentPolicyViolation, RemoteCheckBlock, type RemoteCheckUnavailable } from '../../content-safety/index.js';

/**
 * A content policy's `block`, as the client is told it: 400 `content_policy_violation` in its own error format,
 * naming the policies and the kind of finding — never the value that matched.
 */
export function contentPolicyError(violation: ContentPolicyViolation): GatewayError {
  const policies = violation.policies.map((policy) => `'${policy.policyId}' (version ${policy.version})`).join(' and ');
  // A remote check's reason was written by the operator for the client; a local finding's value never is.
  const reason = violation instanceof RemoteCheckBlock && violation.reason ? ` The check said: ${violation.reason}` : '';
  const message = violation.direction === 'input'
    ? `The request was blocked by content policy ${policies}: it contains content of type '${violation.findingType}'.${reason} Remove it and retry; content policies are set by the gateway's administrators.`
    : `The answer was blocked by content policy ${policies}: the model produced content of type '${violation.findingType}'.${reason}`;
  return new GatewayError(400, 'content_policy_violation', message, null, {}, {
    direction: violation.direction,
    findingType: violation.findingType,
    policies: violation.policies.map((policy) => ({ id: policy.policyId, version: policy.version })),
  });
}

/** A buffered answer whose placeholders could not all be recovered, under `reject-buffered`: nothing of it is sent. */
export function unresolvedPlaceholdersError(count: number): GatewayError {
  return new GatewayError(502, 'unresolved_placeholder',
    `The answer held ${count} placeholder(s) the gateway could not recover exactly, and this request's content policy (unresolvedTokenPolicy: reject-buffered) does not deliver such answers. Retry the request.`);
}

/**
 * A fail-closed remote check (a policy's webhook) that gave no verdict: the request is not sent unchecked (input),
 * or the answer is not delivered unchecked (output). 503: the client may retry; nothing about the check's address.
 */
export function guardrailUnavailableError(unavailable: RemoteCheckUnavailable): GatewayError {
  const policy = `'${unavailable.policy.policyId}' (version ${unavailable.policy.version})`;
  const what = unavailable.direction === 'input' ? 'the request' : 'the answer';
  return new GatewayError(503, 'guardrail_unavailable',
    `The ${unavailable.check} check of content policy ${policy} could not be completed, and the policy does not let ${what} through unchecked. Retry later.`,
    null, {}, { direction: unavailable.direction, check: unavailable.check, policies: [{ id: unavailable.policy.policyId, version: unavailable.policy.version }] });
}
