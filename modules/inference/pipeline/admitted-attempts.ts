import { Logger } from '@nestjs/common';
import type { AttemptOutcome, TokenUsage, UsageEvidence } from '../../../events/index.js';
import { type ImplausibleUsage, type ProviderError, ZERO_USAGE } from '../../canonical/index.js';
import { GatewayFault } from './gateway-fault.js';
import type { ProviderAdapter } from '../../providers/index.js';
import { type AttemptReport, type AttemptTurn, runAttemptLoop } from './attempt-loop.js';
import { attemptFinished } from './attempt-finished.js';
import { exhaustedError } from './client-errors.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import type { RoutedRequest } from './request-admission.js';

const logger = new Logger('Attempts');
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** One operation's attempt at a turn: the adapter of the turn's deployment and the trace headers of the attempt's span. */
export type AdmittedAttempt<Answer> = (turn: AttemptTurn, adapter: ProviderAdapter, traceHeaders: Record<string, string>) => Promise<AttemptReport<Answer>>;

/**
 * Runs an admitted request's attempt loop with one operation's attempt function, and settles a request
 * that could not be answered: the failure is committed to the journal and thrown as the caller's
 * GatewayError (the controller renders it; a client that went away is simply not written to). A
 * GatewayFault (the gateway's own failure during an attempt) ends the request with its error — the
 * caller's 4xx or our 500 — and no attempt is recorded for it: nothing billable happened.
 */
export async function runAdmittedAttempts<Answer>(
  services: InferenceServices,
  settings: PipelineSettings,
  admitted: RoutedRequest,
  attempt: AdmittedAttempt<Answer>,
): Promise<Answer> {
  const { retry } = settings.resilience;
  let result;
  try {
    result = await runAttemptLoop<Answer>({
      candidates: admitted.plan.candidates,
      gate: services.gate,
      retry,
      maxAttempts: admitted.alias.policy.maxAttempts ?? retry.maxAttempts,
      signal: admitted.lifetime.signal,
      remainingMs: () => admitted.lifetime.remainingMs(),
      random: services.random ?? Math.random,
      charge: (candidate) => admitted.quota.enter(candidate.deployment, candidate.route),
      attempt: (turn) => {
        // The attempt's client span starts here; recordAttempt (through the journal) ends it.
        const observed = admitted.observation?.attemptStarted(turn.candidate.deployment, turn.attempt);
        return attempt(turn, services.adapters.for(turn.candidate.deployment.provider.type)!, observed?.upstreamHeaders ?? NO_HEADERS);
      },
    });
  } catch (error) {
    if (!(error instanceof GatewayFault)) throw error;
    if (error.isOurs) logger.error(`request ${admitted.requestId}: the gateway failed during an attempt: ${error.describeCause()}`);
    await admitted.journal.complete({ status: 'failed', httpStatus: error.error.status, errorCode: error.error.code, cacheHit: false });
    throw error.error;
  }
  if (result.kind === 'answered') return result.answer;
  const tried = new Map(admitted.plan.candidates.filter((c) => result.deploymentsTried.has(c.deployment.id)).map((c) => [c.route, c.deployment.id]));
  const failure = exhaustedError(admitted.alias, admitted.plan, admitted.lifetime.signal.reason, result.lastError, result.tried, (route) => {
    // Deployments that failed here may have just opened their breaker: that is when they recover.
    const deploymentId = tried.get(route);
    return deploymentId ? services.gate.recoversAt(deploymentId) : null;
  });
  await admitted.journal.complete({ status: failure.status === 499 ? 'cancelled' : 'failed', httpStatus: failure.status, errorCode: failure.code, cacheHit: false });
  throw failure;
}

/** What an attempt produced, for its AttemptFinished record. */
export interface AttemptRecord {
  outcome: AttemptOutcome;
  error: ProviderError | null;
  /** Null: nothing billable (a failure before any output). */
  usage: TokenUsage | null;
  evidence: UsageEvidence;
  /** Why the provider's usage was not believed (evidence `implausible`); absent or null when it was. */
  implausible?: ImplausibleUsage | null;
  latencyMs: number;
  ttftMs: number | null;
  providerRequestId: string | null;
}

/** Records one finished attempt in the request's journal (priced at the admission's price version). */
export function recordAttempt(admitted: RoutedRequest, turn: AttemptTurn, record: AttemptRecord): void {
  const implausible = record.implausible ?? null;
  if (implausible) {
    // Counts and field names only: never content. The metric counts it too (switchyard_provider_usage_implausible_total).
    const usage = record.usage ?? ZERO_USAGE;
    logger.warn(
      `request ${admitted.requestId} attempt ${turn.attempt}: ${turn.candidate.deployment.id} reported usage the gateway does not believe ` +
        `(${implausible.reason}: ${Object.entries(implausible.reported).map(([field, value]) => `${field}=${value}`).join(', ')}); ` +
        `billed at input ${usage.input}, output ${usage.output}`,
    );
  }
  admitted.journal.recordAttempt(attemptFinished({
    requestId: admitted.requestId,
    attempt: turn.attempt,
    principal: admitted.principal,
    alias: admitted.alias,
    candidate: turn.candidate,
    candidateIds: admitted.plan.candidates.map((c) => c.deployment.id),
    routingReason: `${admitted.plan.reason}; ${turn.why}${turn.trial ? ' (half-open trial)' : ''}`,
    unsentParameters: admitted.unsent(turn.candidate.deployment),
    outcome: record.outcome,
    error: record.error,
    usage: record.usage ?? ZERO_USAGE,
    evidence: record.evidence,
    implausible,
    latencyMs: record.latencyMs,
    ttftMs: record.ttftMs,
    providerRequestId: record.providerRequestId,
  }));
}

/** A failure before any output: cancelled when the client or a cancellation ended it, failed otherwise. */
export function failedOutcome(error: ProviderError): AttemptOutcome {
  return error.errorClass === 'cancelled' ? 'cancelled' : 'failed';
}
