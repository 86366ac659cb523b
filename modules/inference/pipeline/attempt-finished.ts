import type { AttemptFinished, AttemptOutcome, TokenUsage, UsageEvidence } from '../../../events/index.js';
import { type ImplausibleUsage, type ProviderError, ZERO_USAGE } from '../../canonical/index.js';
import { ZERO_COST, attemptCost } from '../pricing/attempt-cost.js';
import { deadlineOf } from '../resilience/deadlines.js';
import type { RouteCandidate } from '../routing/route-planner.js';

export interface FinishedAttempt {
  requestId: string;
  attempt: number;
  principal: { tenantId: string; keyId: string };
  alias: { name: string; strategy: string };
  candidate: RouteCandidate;
  candidateIds: string[];
  routingReason: string;
  /** The requested parameters this deployment accepted without sending them (canonical names); empty for most. */
  unsentParameters?: readonly string[];
  outcome: AttemptOutcome;
  error: ProviderError | null;
  usage: TokenUsage;
  evidence: UsageEvidence;
  /** Why the provider's usage was not believed (evidence `implausible`), or null. */
  implausible: ImplausibleUsage | null;
  latencyMs: number;
  ttftMs: number | null;
  providerRequestId: string | null;
}

/**
 * The AttemptFinished payload of one attempt, whatever the operation (chat, embeddings): who, which
 * deployment, what happened, and what it cost at the price version in effect at admission.
 */
export function attemptFinished(attempt: FinishedAttempt): AttemptFinished['data'] {
  const { candidate, error, usage } = attempt;
  const deployment = candidate.deployment;
  const data: AttemptFinished['data'] = {
    requestId: attempt.requestId,
    attempt: attempt.attempt,
    tenantId: attempt.principal.tenantId,
    keyId: attempt.principal.keyId,
    alias: attempt.alias.name,
    deploymentId: deployment.id,
    providerId: deployment.provider.id,
    model: deployment.model,
    outcome: attempt.outcome,
    errorClass: error?.errorClass ?? null,
    deadline: deadlineOf(error),
    httpStatus: error ? error.httpStatus : 200,
    usage,
    usageEvidence: attempt.evidence,
    cost: usage === ZERO_USAGE ? ZERO_COST : attemptCost(usage, candidate.price.table),
    priceVersion: candidate.price.version,
    latencyMs: attempt.latencyMs,
    ttftMs: attempt.ttftMs,
    providerRequestId: attempt.providerRequestId ?? error?.providerRequestId ?? null,
    routing: { strategy: attempt.alias.strategy, candidates: attempt.candidateIds, reason: attempt.routingReason },
  };
  // Only when there is something to say: the usual event keeps its one shape.
  if (attempt.unsentParameters?.length) data.unsentParameters = [...attempt.unsentParameters];
  if (attempt.implausible) data.diagnostics = { implausibleUsage: { reason: attempt.implausible.reason, reported: attempt.implausible.reported } };
  return data;
}
