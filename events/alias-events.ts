import type { DomainEvent } from './event.js';

/**
 * priority: the lowest healthy priority group, weighted within it. weighted: weighted random over all
 * routes. least-latency / least-cost: by recent latency (EWMA) / by price × estimated tokens. sticky: like
 * priority, but a caller's `x-session-id` keeps landing on the same route (rendezvous hashing).
 */
export const ROUTING_STRATEGIES = ['priority', 'weighted', 'least-latency', 'least-cost', 'sticky'] as const;
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
  /** Sends a stable share of traffic to one route first (absent = no canary). */
  canary?: AliasCanary;
  /**
   * The exact cache serves this alias unless this is false. Absent means on (and is how `on` is
   * written), so versions published before the cache existed read the same as new ones.
   */
  cache?: false;
  /** Rate and concurrency limits of the alias as a whole, over every caller (absent = none). */
  limits?: AliasRateLimits;
  /**
   * An alias (usually cheaper) that serves a request a hard budget would refuse, instead of the 402;
   * its cost still counts against the budget. Absent = refuse.
   */
  budgetDowngrade?: string;
  /** The content policy attached to the alias (events/content-policy-events.ts); absent = none. */
  contentPolicy?: string;
}

/**
 * Per-minute limits of an alias, and its concurrent requests over every caller (on every node when Redis
 * is configured); unset members are left out, so versions published before a member existed read the same.
 */
export interface AliasRateLimits {
  rpm?: number;
  tpm?: number;
  inputTpm?: number;
  outputTpm?: number;
  maxConcurrency?: number;
}

/**
 * A canary route: `percent` of sessions (or of requests without a session) try `deploymentId` first;
 * the rest use the strategy without it and reach it only as the last fallback. Assignment is a stable
 * hash of the alias, `salt` and the session, so it is reproducible by an auditor and changing `salt`
 * reshuffles who is in the canary.
 */
export interface AliasCanary {
  deploymentId: string;
  /** 0..100, up to two decimals. */
  percent: number;
  salt: string;
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
