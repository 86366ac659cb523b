import { Decimal } from 'decimal.js';
import type { ScheduledPrice } from '../../../events/index.js';
import {
  type ResolvedAlias, type ResolvedDeployment, priceInEffect,
} from '../../../projections/routing-snapshot/index.js';
import type { LatencyTracker } from './latency-tracker.js';
import { stableBucket, stableUnit } from './stable-hash.js';

export interface RouteCandidate {
  deployment: ResolvedDeployment;
  price: ScheduledPrice;
  priority: number;
  weight: number;
  /** The route's alias-level name (`alias#position`): what callers see instead of deployment ids. */
  route: string;
}

/** The eligibility stages, in the order they apply (after the caller's alias allowlist). */
export type EligibilityStage = 'region' | 'capabilities' | 'health' | 'budget';

/** Why the health stage (or the deployment gate at call time) leaves a deployment out. */
export type HealthRefusal = 'disabled' | 'circuit_open' | 'trial_in_flight' | 'throttled' | 'rate_limited' | 'saturated';

/**
 * Why a route was left out, as a typed code: client errors are built from these, never from text.
 * The code doubles as the `error_class` a 503 lists for the route.
 */
export type SkipReason =
  | 'outside_region'
  | 'lacks_capability'
  | 'unsupported_parameter'
  | 'context_window_too_small'
  | 'no_price_in_effect'
  | HealthRefusal
  | 'over_budget';

export interface SkippedRoute {
  deploymentId: string;
  route: string;
  stage: EligibilityStage;
  reason: SkipReason;
  /** lacks_capability: the capabilities missing; unsupported_parameter: the parameter. */
  detail: readonly string[];
  /** Health only: when the deployment should take traffic again (epoch ms), if known. */
  until: number | null;
}

export interface RoutePlan {
  candidates: RouteCandidate[];
  /** Routes left out and why (for the caller's error and for audit). */
  skipped: SkippedRoute[];
  /** How the order was chosen, for AttemptFinished.routing.reason. */
  reason: string;
  /** The stage that left no route eligible; null when candidates remain. */
  emptiedBy: EligibilityStage | null;
}

/** Live health of a deployment: null when it may take traffic, else why not (and until when). */
export interface HealthView {
  unavailable(deployment: ResolvedDeployment): { reason: Exclude<HealthRefusal, 'disabled'>; until: number | null } | null;
}

/** Names a request parameter the deployment's provider cannot honour, or null when it honours them all. */
export type ParameterSupport = (deployment: ResolvedDeployment) => string | null;

/** Who is asking, for sticky sessions and canary assignment. */
export interface Affinity {
  /** The authenticated principal (tenant and key): sessions are scoped to it, so two callers never collide. */
  principal: string;
  /** The caller's `x-session-id`, already bounded. */
  sessionId: string | null;
  /** Stands in for the session when there is none (canary share per request). */
  requestId: string;
}

export interface PlanInput {
  alias: ResolvedAlias;
  needs: readonly string[];
  estimatedInputTokens: number;
  /** Output tokens reserved for the whole request (every choice): what its cost is estimated with. */
  reservedOutputTokens: number;
  /**
   * Output tokens one choice may produce, which must fit the context window beside the input; the
   * reserved output when absent (one choice). `n` choices share the prompt but each has its own output.
   */
  outputTokensPerChoice?: number;
  at: Date;
  /** Least-latency compares time to first token for streams, total latency otherwise. */
  stream?: boolean;
  affinity?: Affinity;
  /** What the caller may still spend (USD decimal); routes whose estimate exceeds it are skipped. */
  remainingBudgetUsd?: string | null;
  /** Capabilities stage: routes whose provider cannot honour a requested parameter are skipped. */
  honours?: ParameterSupport;
  /** Capabilities stage: whether the provider's adapter can serve a capability the deployment declares (default: yes). */
  adapterServes?: (deployment: ResolvedDeployment, capability: string) => boolean;
}

interface Verdict {
  reason: SkipReason;
  detail?: readonly string[];
  until?: number | null;
}

const ALWAYS_HEALTHY: HealthView = { unavailable: () => null };
const CANARY_BUCKETS = 10_000;

/**
 * Eligibility, then strategy (issue 5 §1–2; reference 004 "Selection Pipeline"). Routes are filtered
 * in a fixed order — region / data boundary (a hard rule, never a soft weight), the capabilities the
 * request needs (including its context window and a price in effect), health (disabled, circuit open,
 * throttled, saturated), budget — and the survivors are ordered by the alias's strategy, with the
 * canary share applied last. The whole order is the fallback chain; the first entry is the choice.
 *
 * Weighted choices use the exponential race (Efraimidis–Spirakis): each route draws u in (0, 1] and
 * sorts by -ln(u) / weight, which picks route i first with probability weight_i / Σ weight and orders
 * the fallbacks by weight as well. With a session, u comes from a hash of (principal, session, route)
 * instead of the random source: that is weighted rendezvous hashing, so a session stays on its route,
 * and when a route drops out only the sessions that were on it move.
 */
export class RoutePlanner {
  constructor(
    private readonly latency: LatencyTracker,
    private readonly health: HealthView = ALWAYS_HEALTHY,
    private readonly random: () => number = Math.random,
  ) {}

  plan(input: PlanInput): RoutePlan {
    const { alias } = input;
    const skipped: SkippedRoute[] = [];
    let remaining: Array<{ candidate: Omit<RouteCandidate, 'price'>; price: ScheduledPrice | null }> = alias.routes.map((route, index) => ({
      candidate: { deployment: route.deployment, priority: route.priority, weight: route.weight, route: `${alias.name}#${index + 1}` },
      price: priceInEffect(route.deployment, input.at),
    }));
    const stage = (name: EligibilityStage, reasonOf: (entry: (typeof remaining)[number]) => Verdict | null): boolean => {
      remaining = remaining.filter((entry) => {
        const verdict = reasonOf(entry);
        if (!verdict) return true;
        skipped.push({
          deploymentId: entry.candidate.deployment.id, route: entry.candidate.route, stage: name,
          reason: verdict.reason, detail: verdict.detail ?? [], until: verdict.until ?? null,
        });
        return false;
      });
      return remaining.length > 0;
    };
    const emptied = (name: EligibilityStage): RoutePlan => ({ candidates: [], skipped, reason: `no route passed the ${name} stage`, emptiedBy: name });

    const regions = alias.policy.regions;
    if (!stage('region', ({ candidate }) => (regions.length && !regions.includes(candidate.deployment.region ?? '') ? { reason: 'outside_region' } : null))) {
      return emptied('region');
    }
    if (!stage('capabilities', ({ candidate, price }) => this.incapability(candidate.deployment, input, price))) {
      return emptied('capabilities');
    }
    if (!stage('health', ({ candidate }) => {
      if (candidate.deployment.status !== 'active') return { reason: 'disabled' };
      return this.health.unavailable(candidate.deployment);
    })) {
      return emptied('health');
    }
    const budget = input.remainingBudgetUsd != null ? new Decimal(input.remainingBudgetUsd) : null;
    if (budget && !stage('budget', ({ price }) => (estimatedCost(price!, input).greaterThan(budget) ? { reason: 'over_budget' } : null))) {
      return emptied('budget');
    }

    // Written out, not `{ ...candidate, price }`: see the lint rule against a spread followed by new keys.
    const eligible: RouteCandidate[] = remaining.map(({ candidate, price }) => ({
      deployment: candidate.deployment, price: price!, priority: candidate.priority, weight: candidate.weight, route: candidate.route,
    }));
    const { ordered, reason } = this.order(eligible, input);
    const canary = this.applyCanary(ordered, input);
    const skippedNote = skipped.length ? `; skipped ${skipped.map((s) => `${s.deploymentId} (${s.reason}${s.detail.length ? `: ${s.detail.join(', ')}` : ''})`).join(', ')}` : '';
    return { candidates: canary.ordered, skipped, reason: `${reason}${canary.note}${skippedNote}`, emptiedBy: null };
  }

  private incapability(deployment: ResolvedDeployment, input: PlanInput, price: ScheduledPrice | null): Verdict | null {
    const missing = input.needs.filter((need) => !deployment.capabilities.has(need) || input.adapterServes?.(deployment, need) === false);
    if (missing.length) return { reason: 'lacks_capability', detail: missing };
    const parameter = input.honours?.(deployment) ?? null;
    if (parameter !== null) return { reason: 'unsupported_parameter', detail: [parameter] };
    if (input.estimatedInputTokens + Math.min(input.outputTokensPerChoice ?? input.reservedOutputTokens, deployment.maxOutputTokens) > deployment.contextWindow) {
      return { reason: 'context_window_too_small' };
    }
    if (!price) return { reason: 'no_price_in_effect' };
    return null;
  }

  private order(eligible: RouteCandidate[], input: PlanInput): { ordered: RouteCandidate[]; reason: string } {
    const { alias } = input;
    const session = alias.strategy === 'sticky' && input.affinity?.sessionId ? input.affinity : null;
    const race = new Map(eligible.map((c) => [c, raceKey(c, session ? stableUnit(['sticky', session.principal, session.sessionId!, c.deployment.id]) : 1 - this.random())]));
    const byRace = (a: RouteCandidate, b: RouteCandidate) => {
      const difference = race.get(a)! - race.get(b)!;
      return Number.isNaN(difference) ? 0 : difference; // two standby routes (both infinite)
    };
    const weights = (list: RouteCandidate[]) => list.map((c) => `${c.deployment.id}:${c.weight}`).join(' ');
    switch (alias.strategy) {
      case 'weighted': {
        const ordered = [...eligible].sort(byRace);
        return { ordered, reason: `weighted: picked ${ordered[0].deployment.id} among ${weights(eligible)}` };
      }
      case 'least-latency': {
        const kind = input.stream ? 'ttft' : 'latency';
        const estimate = new Map(eligible.map((c) => [c, this.latency.estimate(c.deployment.id, kind)]));
        const ordered = [...eligible].sort((a, b) => estimate.get(a)! - estimate.get(b)! || byRace(a, b));
        const shown = ordered.map((c) => `${c.deployment.id}:${Math.round(estimate.get(c)!)}ms`).join(' ');
        return { ordered, reason: `least-latency (${kind} EWMA, unmeasured first): ${shown}` };
      }
      case 'least-cost': {
        const cost = new Map(eligible.map((c) => [c, estimatedCost(c.price, input)]));
        const ordered = [...eligible].sort((a, b) => cost.get(a)!.comparedTo(cost.get(b)!) || byRace(a, b));
        const shown = ordered.map((c) => `${c.deployment.id}:$${cost.get(c)!.toSignificantDigits(4).toString()}`).join(' ');
        return { ordered, reason: `least-cost (price × ${input.estimatedInputTokens}+${input.reservedOutputTokens} estimated tokens): ${shown}` };
      }
      case 'sticky':
      case 'priority':
      default: {
        const ordered = [...eligible].sort((a, b) => a.priority - b.priority || byRace(a, b));
        const group = ordered.filter((c) => c.priority === ordered[0].priority);
        const how =
          alias.strategy !== 'sticky' ? 'weighted' : session ? 'session hash (rendezvous)' : 'weighted; no x-session-id, so not sticky';
        return { ordered, reason: `${alias.strategy}: group ${ordered[0].priority}, ${how}: picked ${ordered[0].deployment.id} among ${weights(group)}` };
      }
    }
  }

  /** Puts the canary first for the canary share and last for everyone else. */
  private applyCanary(ordered: RouteCandidate[], input: PlanInput): { ordered: RouteCandidate[]; note: string } {
    const canary = input.alias.policy.canary;
    if (!canary) return { ordered, note: '' };
    const index = ordered.findIndex((c) => c.deployment.id === canary.deploymentId);
    if (index < 0) return { ordered, note: `; canary ${canary.deploymentId} not eligible` };
    const affinity = input.affinity;
    const subject = affinity?.sessionId ? ['session', affinity.principal, affinity.sessionId] : ['request', affinity?.requestId ?? String(this.random())];
    const bucket = stableBucket(['canary', input.alias.name, canary.salt, ...subject], CANARY_BUCKETS);
    const threshold = Math.round(canary.percent * (CANARY_BUCKETS / 100));
    const chosen = bucket < threshold;
    const rest = ordered.filter((_, i) => i !== index);
    const note = `; canary ${canary.deploymentId} ${canary.percent}%: ${subject[0]} bucket ${bucket}/${CANARY_BUCKETS} ${chosen ? '<' : '>='} ${threshold} → ${chosen ? 'canary first' : 'canary last'}`;
    return { ordered: chosen ? [ordered[index], ...rest] : [...rest, ordered[index]], note };
  }
}

/** Exponential-race key: smaller goes first; a zero weight goes last (standby). */
function raceKey(candidate: RouteCandidate, unit: number): number {
  return candidate.weight > 0 ? -Math.log(unit) / candidate.weight : Number.POSITIVE_INFINITY;
}

/** Price × estimated tokens (the reserved output counted in full): what the request may cost on this route. */
export function estimatedCost(price: ScheduledPrice, input: Pick<PlanInput, 'estimatedInputTokens' | 'reservedOutputTokens'>): Decimal {
  const table = price.table;
  return new Decimal(table.inputPer1M)
    .times(input.estimatedInputTokens)
    .plus(new Decimal(table.outputPer1M).times(input.reservedOutputTokens))
    .dividedBy(1_000_000);
}
