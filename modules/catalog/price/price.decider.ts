import { Decimal } from 'decimal.js';
import { type PriceEvent, priceFold, type PriceState, type PriceTable } from '../../../events/index.js';
import { type Decider, DomainError } from '../../../src/kernel/index.js';

export type PriceCommand = { type: 'SchedulePrice'; deploymentId: string; effectiveFrom: Date; table: PriceTable };

/** How far in the past a new price may start: tolerates clock skew between an operator and the gateway. */
const PAST_TOLERANCE_MS = 60_000;

export const priceDecider: Decider<PriceCommand, PriceEvent, PriceState> = {
  initialState: priceFold.initialState,
  evolve: priceFold.evolve,

  decide(command, state, context) {
    const problem = priceTableProblem(command.table);
    if (problem) throw new DomainError('invalid_price', problem, 422);
    const from = command.effectiveFrom;
    const existing = state.schedule.find((entry) => entry.effectiveFrom.getTime() === from.getTime());
    if (existing) {
      if (samePrice(existing.table, command.table)) return [];
      throw new DomainError('price_exists', `A different price already starts at ${from.toISOString()}; prices are never edited`);
    }
    if (from.getTime() < context.now.getTime() - PAST_TOLERANCE_MS) {
      throw new DomainError('price_in_past', `effectiveFrom ${from.toISOString()} is in the past; history is never rewritten`, 422);
    }
    return [{ type: 'PriceScheduled', data: { deploymentId: command.deploymentId, effectiveFrom: from.toISOString(), ...command.table } }];
  },
};

export function priceTableProblem(table: PriceTable): string | null {
  const fields: Array<[string, string | null]> = [
    ['inputPer1M', table.inputPer1M], ['outputPer1M', table.outputPer1M], ['cachedInputPer1M', table.cachedInputPer1M],
    ['cacheWritePer1M', table.cacheWritePer1M], ['reasoningPer1M', table.reasoningPer1M],
  ];
  for (const [name, value] of fields) {
    if (value === null) continue;
    if (typeof value !== 'string' || !/^\d+(\.\d+)?$/.test(value)) return `${name} must be a non-negative decimal string like "0.15"`;
    if (new Decimal(value).decimalPlaces() > 9) return `${name} has more than 9 decimal places`;
  }
  if (table.currency !== 'USD') return 'currency must be USD';
  return null;
}

function samePrice(a: PriceTable, b: PriceTable): boolean {
  const eq = (x: string | null, y: string | null) => (x === null || y === null ? x === y : new Decimal(x).eq(y));
  return eq(a.inputPer1M, b.inputPer1M) && eq(a.outputPer1M, b.outputPer1M) && eq(a.cachedInputPer1M, b.cachedInputPer1M) &&
    eq(a.cacheWritePer1M, b.cacheWritePer1M) && eq(a.reasoningPer1M, b.reasoningPer1M) && a.currency === b.currency;
}
