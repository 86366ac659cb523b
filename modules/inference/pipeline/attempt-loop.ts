import type { AttemptOutcome } from '../../../events/index.js';
import type { GatewayError, ProviderError } from '../../canonical/index.js';
import { waitFor } from '../resilience/backoff.js';
import { DEADLINE_CODES, deadlineOf } from '../resilience/deadlines.js';
import { type DeploymentGate, type GateLease, isRefusal } from '../resilience/deployment-gate.js';
import { healthSignal } from '../resilience/health-signal.js';
import type { RetrySettings } from '../resilience/resilience-settings.js';
import { type NextStep, afterFailure } from '../resilience/retry-policy.js';
import type { RouteCandidate } from '../routing/route-planner.js';

/** What one attempt reports back to the loop. */
export interface AttemptReport<Answer> {
  /**
   * The request's answer when this attempt settled it — a buffered response, or a stream that reached
   * the client (even one that failed later: nothing may be retried after the first output). Null when
   * the attempt failed before anything reached the client and another attempt may be tried.
   */
  answer: Answer | null;
  outcome: AttemptOutcome;
  error: ProviderError | null;
}

/** One attempt's inputs: the route, its 1-based number in the request and why it was chosen. */
export interface AttemptTurn {
  candidate: RouteCandidate;
  attempt: number;
  /** Why this route now ("attempt 2: transient: fall back → backup"), for the attempt's routing record. */
  why: string;
  /** A half-open breaker trial. */
  trial: boolean;
}

/** A route the request could not use, as the caller's 503 lists it: the alias-level name, never a deployment. */
export interface TriedRoute {
  route: string;
  /** An error class, a deadline's code, or the gate's refusal (circuit_open, saturated …). */
  errorClass: string;
  /** When it should take traffic again (epoch ms), if known. */
  recoversAt: number | null;
  /** The gateway's own 429 when a rate limit of the route (its quota group) refused it. */
  refusal?: GatewayError;
}

/** A route's quota group refused the attempt (errorClass of its TriedRoute). */
export const QUOTA_EXHAUSTED = 'quota_group_exhausted';

export type LoopResult<Answer> =
  | { kind: 'answered'; answer: Answer }
  | { kind: 'exhausted'; tried: TriedRoute[]; lastError: ProviderError | null; deploymentsTried: ReadonlySet<string> };

export interface AttemptLoopInput<Answer> {
  candidates: readonly RouteCandidate[];
  gate: DeploymentGate;
  retry: RetrySettings;
  maxAttempts: number;
  signal: AbortSignal;
  /** Time left before the request deadline. */
  remainingMs: () => number;
  random: () => number;
  attempt: (turn: AttemptTurn) => Promise<AttemptReport<Answer>>;
  /**
   * Charges what dispatching to a candidate costs the request beyond the gate (its deployment's quota
   * group), right before the attempt; a refusal makes the candidate ineligible and the loop moves on.
   */
  charge?: (candidate: RouteCandidate) => Promise<{ error: GatewayError; recoversAt: number | null } | null>;
}

/**
 * The attempt loop (DESIGN §6): walk the plan's candidates under one attempt budget and the request
 * deadline, asking the pure retry policy after each failure whether to retry the same deployment, fall
 * back to the next or stop. Every call passes the deployment gate, and its lease is left with the
 * attempt's health signal before the next target is chosen, so a failure that opens a breaker also stops
 * this request from calling that deployment again.
 */
export async function runAttemptLoop<Answer>(input: AttemptLoopInput<Answer>): Promise<LoopResult<Answer>> {
  const queue = [...input.candidates];
  const tried: TriedRoute[] = [];
  const retriesOf = new Map<string, number>();
  const deploymentsTried = new Set<string>();
  let attempts = 0;
  let lastError: ProviderError | null = null;
  let current: RouteCandidate | null = null;
  let step: NextStep | null = null;

  while (!input.signal.aborted) {
    let next: { candidate: RouteCandidate; lease: GateLease } | null = null;
    if (step?.kind === 'retry-same' && current) {
      if (!(await waitFor(step.waitMs, input.signal))) break;
      // The provider's retry-after was just honoured, so its throttle no longer applies to this call.
      const entry = await input.gate.enter(current.deployment, true);
      if (isRefusal(entry)) {
        tried.push({ route: current.route, errorClass: entry.refused, recoversAt: entry.until });
        step = { kind: 'fall-back', why: `${current.route} became unavailable (${entry.refused})` };
      } else {
        next = { candidate: current, lease: entry };
        retriesOf.set(current.deployment.id, (retriesOf.get(current.deployment.id) ?? 0) + 1);
      }
    }
    // Routes passed over on the way to this attempt, named in its routing record.
    const passedOver: string[] = [];
    while (!next && queue.length > 0) {
      const candidate = queue.shift()!;
      const entry = await input.gate.enter(candidate.deployment);
      if (isRefusal(entry)) {
        tried.push({ route: candidate.route, errorClass: entry.refused, recoversAt: entry.until });
        passedOver.push(`${candidate.route} (${entry.refused})`);
        continue;
      }
      let refused: { error: GatewayError; recoversAt: number | null } | null;
      try {
        refused = input.charge ? await input.charge(candidate) : null;
      } catch (error) {
        entry.leave('neutral', null);
        throw error;
      }
      if (refused) {
        // Nothing was sent: the deployment learns nothing from it.
        entry.leave('neutral', null);
        tried.push({ route: candidate.route, errorClass: QUOTA_EXHAUSTED, recoversAt: refused.recoversAt, refusal: refused.error });
        passedOver.push(`${candidate.route} (${QUOTA_EXHAUSTED})`);
      } else next = { candidate, lease: entry };
    }
    if (!next) break;

    const { candidate, lease }: { candidate: RouteCandidate; lease: GateLease } = next;
    current = candidate;
    deploymentsTried.add(candidate.deployment.id);
    attempts++;
    const chosen = step ? `attempt ${attempts}: ${step.why} → ${candidate.deployment.id}` : `attempt 1: first choice ${candidate.deployment.id}`;
    const why = passedOver.length ? `${chosen}, passing over ${passedOver.join(', ')}` : chosen;
    let report: AttemptReport<Answer> | null = null;
    try {
      report = await input.attempt({ candidate, attempt: attempts, why, trial: lease.trial });
    } finally {
      leaveAfter(lease, report);
    }
    if (report.answer !== null) return { kind: 'answered', answer: report.answer };
    const error = report.error!;
    lastError = error;
    // When the gateway itself will call this route again — its throttle (the provider's retry-after, at most
    // MAX_THROTTLE_MS) or its breaker — never the provider's raw hint, which may ask for days.
    tried.push({ route: candidate.route, errorClass: classOf(error), recoversAt: input.gate.recoversAt(candidate.deployment.id) });
    step = afterFailure(
      {
        errorClass: error.errorClass,
        retryAfterMs: error.retryAfterMs,
        attemptsMade: attempts,
        maxAttempts: input.maxAttempts,
        retriesOfThisDeployment: retriesOf.get(candidate.deployment.id) ?? 0,
        deploymentsTried: deploymentsTried.size,
        alternativesLeft: queue.length > 0,
        remainingMs: input.remainingMs(),
      },
      input.retry,
      input.random,
    );
    if (step.kind === 'stop') break;
  }
  return { kind: 'exhausted', tried, lastError, deploymentsTried };
}

/**
 * Ends a call's lease with what the call said about the provider's health. A call that threw (`null`)
 * is the gateway's own failure: it says nothing about the provider.
 */
export function leaveAfter(lease: GateLease, report: Pick<AttemptReport<unknown>, 'outcome' | 'error'> | null): void {
  lease.leave(report ? healthSignal(report.outcome, report.error) : 'neutral', report?.error ?? null);
}

/** A failure's class as the caller sees it: the deadline's own code when a deadline ended it. */
function classOf(error: ProviderError): string {
  const deadline = deadlineOf(error);
  return deadline ? DEADLINE_CODES[deadline] : error.errorClass;
}
