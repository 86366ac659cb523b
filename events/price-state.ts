import type { StateFold } from '../src/kernel/index.js';
import type { PriceEvent, PriceTable } from './price-events.js';

export interface ScheduledPrice {
  /** The stream version of the PriceScheduled event: the price version stored on ledger rows. */
  version: number;
  effectiveFrom: Date;
  table: PriceTable;
}

/** A deployment's price schedule as its events leave it: what the catalog decides on and the routing snapshot folds. */
export interface PriceState {
  /** Every price ever scheduled, in stream order; never edited. */
  schedule: ScheduledPrice[];
}

export const priceFold: StateFold<PriceEvent, PriceState> = {
  initialState: () => ({ schedule: [] }),

  evolve(state, event) {
    const { deploymentId: _deployment, effectiveFrom, ...table } = event.data;
    return {
      schedule: [...state.schedule, { version: state.schedule.length + 1, effectiveFrom: new Date(effectiveFrom), table }],
    };
  },
};

/**
 * The price in effect at `at`: the latest effectiveFrom not after it (of two with the same start, the one
 * scheduled later). The one rule for admission, billing and the admin views; the schedule may be in any order.
 */
export function priceAt(state: { readonly schedule: readonly ScheduledPrice[] }, at: Date): ScheduledPrice | null {
  let best: ScheduledPrice | null = null;
  for (const entry of state.schedule) {
    if (entry.effectiveFrom.getTime() <= at.getTime() && (!best || entry.effectiveFrom >= best.effectiveFrom)) best = entry;
  }
  return best;
}
