import type { DomainEvent } from './event.js';

/** Prices per one million tokens, as decimal strings (never binary floating point). */
export interface PriceTable {
  inputPer1M: string;
  outputPer1M: string;
  cachedInputPer1M: string | null;
  cacheWritePer1M: string | null;
  /** Reasoning tokens are output tokens; a deployment may price them differently. Null = output price. */
  reasoningPer1M: string | null;
  currency: 'USD';
}

/** Effective-dated and never edited: a price change is a new PriceScheduled with a later effectiveFrom. */
export type PriceScheduled = DomainEvent<'PriceScheduled', { deploymentId: string; effectiveFrom: string } & PriceTable>;

export type PriceEvent = PriceScheduled;
export const PRICE_EVENT_TYPES = ['PriceScheduled'] as const;

export const priceStream = (deploymentId: string) => `price-${deploymentId}`;
