import { Decimal } from 'decimal.js';
import type { ScheduledPrice } from '../../catalog/price/price.decider.js';
import {
  type ResolvedAlias, type ResolvedDeployment, priceInEffect,
} from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { LatencyTracker } from './latency-tracker.js';

export interface RouteCandidate {
  deployment: ResolvedDeployment;
  price: ScheduledPrice;
  priority: number;
  weight: number;
}

export interface RoutePlan {
  candidates: RouteCandidate[];
  /** Routes left out and why (recorded for the caller's 503 and for audit). */
  skipped: Array<{ deploymentId: string; reason: string }>;
  /** How the order was chosen. */
  reason: string;
}

export interface PlanInput {
  alias: ResolvedAlias;
  needs: readonly string[];
  estimatedInputTokens: number;
  reservedOutputTokens: number;
  at: Date;
}

/**
 * Eligibility, then strategy: routes whose deployment is disabled, lacks a capability the request
 * needs, cannot fit the request in its context window, lies outside the alias's regions or has no price
 * in effect are skipped; the rest are ordered by the alias's strategy.
 */
export class RoutePlanner {
  constructor(
    private readonly latency: LatencyTracker,
    private readonly random: () => number = Math.random,
  ) {}

  plan(input: PlanInput): RoutePlan {
    const { alias } = input;
    const skipped: RoutePlan['skipped'] = [];
    const eligible: RouteCandidate[] = [];
    for (const route of alias.routes) {
      const deployment = route.deployment;
      const reason = this.ineligibility(deployment, input);
      if (reason) {
        skipped.push({ deploymentId: deployment.id, reason });
        continue;
      }
      eligible.push({ deployment, price: priceInEffect(deployment, input.at)!, priority: route.priority, weight: route.weight });
    }
    switch (alias.strategy) {
      case 'weighted':
        return { candidates: this.weightedOrder(eligible), skipped, reason: 'weighted random over all routes' };
      case 'least-latency':
        return {
          candidates: [...eligible].sort((a, b) => this.latency.estimate(a.deployment.id) - this.latency.estimate(b.deployment.id)),
          skipped,
          reason: 'lowest recent latency first',
        };
      case 'least-cost':
        return {
          candidates: [...eligible].sort((a, b) => estimatedCost(a, input).comparedTo(estimatedCost(b, input))),
          skipped,
          reason: 'lowest estimated cost first',
        };
      case 'priority':
      default: {
        const groups = new Map<number, RouteCandidate[]>();
        for (const candidate of eligible) groups.set(candidate.priority, [...(groups.get(candidate.priority) ?? []), candidate]);
        const ordered = [...groups.keys()].sort((a, b) => a - b).flatMap((priority) => this.weightedOrder(groups.get(priority)!));
        return { candidates: ordered, skipped, reason: 'lowest priority group first, weighted within a group' };
      }
    }
  }

  private ineligibility(deployment: ResolvedDeployment, input: PlanInput): string | null {
    if (deployment.status !== 'active') return 'disabled';
    const missing = input.needs.filter((need) => !deployment.capabilities.has(need));
    if (missing.length) return `lacks ${missing.join(', ')}`;
    if (input.estimatedInputTokens + Math.min(input.reservedOutputTokens, deployment.maxOutputTokens) > deployment.contextWindow) {
      return 'context window too small';
    }
    if (input.alias.policy.regions.length && !input.alias.policy.regions.includes(deployment.region ?? '')) return 'outside the allowed regions';
    if (!priceInEffect(deployment, input.at)) return 'no price in effect';
    return null;
  }

  /** Weighted sampling without replacement: the order of fallbacks also follows the weights. */
  private weightedOrder(candidates: RouteCandidate[]): RouteCandidate[] {
    const pool = [...candidates];
    const ordered: RouteCandidate[] = [];
    while (pool.length) {
      const total = pool.reduce((sum, c) => sum + Math.max(c.weight, 0), 0);
      let index = 0;
      if (total > 0) {
        let pick = this.random() * total;
        index = pool.findIndex((c) => (pick -= Math.max(c.weight, 0)) < 0);
        if (index < 0) index = pool.length - 1;
      }
      ordered.push(pool.splice(index, 1)[0]);
    }
    return ordered;
  }
}

function estimatedCost(candidate: RouteCandidate, input: PlanInput): Decimal {
  const table = candidate.price.table;
  return new Decimal(table.inputPer1M).times(input.estimatedInputTokens).plus(new Decimal(table.outputPer1M).times(input.reservedOutputTokens));
}
