import { GatewayError } from '../../canonical/index.js';
import type { ContentPolicyViolation } from '../../content-safety/index.js';

/**
 * A content policy's `block`, as the client is told it: 400 `content_policy_violation` in its own error format,
 * naming the policies and the kind of finding — never the value that matched.
 */
export function contentPolicyError(violation: ContentPolicyViolation): GatewayError {
  const policies = violation.policies.map((policy) => `'${policy.policyId}' (version ${policy.version})`).join(' and ');
  const message = violation.direction === 'input'
    ? `The request was blocked by content policy ${policies}: it contains content of type '${violation.findingType}'. Remove it and retry; content policies are set by the gateway's administrators.`
    : `The answer was blocked by content policy ${policies}: the model produced content of type '${violation.findingType}'.`;
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
