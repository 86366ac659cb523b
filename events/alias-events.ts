import type { DomainEvent } from './event.js';

export const ROUTING_STRATEGIES = ['priority', 'weighted', 'least-latency', 'least-cost'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

export interface AliasRoute {
  deploymentId: string;
  /** Lower is tried first; routes of equal priority share traffic by weight. */
  priority: number;
  weight: number;
}

export interface AliasPolicy {
  /** Capabilities every route must have (publication is refused otherwise). */
  requiredCapabilities: string[];
  /** Most upstream attempts per request, retries and fallbacks together. */
  maxAttempts: number | null;
  /** Time to first token before the attempt is abandoned (ms). */
  ttftTimeoutMs: number | null;
  /** Allowed deployment regions (data boundary); empty = any. */
  regions: string[];
}

export type AliasVisibility = 'public' | 'private';

export type AliasPublished = DomainEvent<
  'AliasPublished',
  { alias: string; version: number; strategy: RoutingStrategy; routes: AliasRoute[]; policy: AliasPolicy; visibility: AliasVisibility }
>;
export type AliasRetired = DomainEvent<'AliasRetired', { alias: string; reason: string | null }>;

export type AliasEvent = AliasPublished | AliasRetired;
export const ALIAS_EVENT_TYPES = ['AliasPublished', 'AliasRetired'] as const;

export const aliasStream = (alias: string) => `alias-${alias}`;
