import { Decimal } from 'decimal.js';
import type { AttemptCost, PriceTable, TokenUsage } from '../../../events/index.js';

const PER_TOKEN_DIVISOR = new Decimal(1_000_000);
/** Ledger precision (numeric(24,12)); each component is rounded half-even once, so totals add up exactly. */
const SCALE = 12;

/**
 * The cost of one attempt, in exact decimals. Cached input is priced at the cached price and is not
 * also counted as plain input; cache writes likewise; reasoning tokens are output tokens priced at the
 * reasoning price when the deployment sets one.
 */
export function attemptCost(usage: TokenUsage, price: PriceTable): AttemptCost {
  const inputRate = new Decimal(price.inputPer1M);
  const outputRate = new Decimal(price.outputPer1M);
  const cachedRate = price.cachedInputPer1M !== null ? new Decimal(price.cachedInputPer1M) : inputRate;
  const writeRate = price.cacheWritePer1M !== null ? new Decimal(price.cacheWritePer1M) : inputRate;
  const reasoningRate = price.reasoningPer1M !== null ? new Decimal(price.reasoningPer1M) : outputRate;

  const cached = Math.min(usage.cachedInput, usage.input);
  const written = Math.min(usage.cacheWrite, usage.input - cached);
  const plainInput = usage.input - cached - written;
  const reasoning = Math.min(usage.reasoning, usage.output);

  const input = component(plainInput, inputRate);
  const cachedInput = component(cached, cachedRate);
  const cacheWrite = component(written, writeRate);
  const output = component(usage.output - reasoning, outputRate).plus(component(reasoning, reasoningRate));
  const total = input.plus(cachedInput).plus(cacheWrite).plus(output);
  return {
    input: input.toFixed(SCALE),
    cachedInput: cachedInput.toFixed(SCALE),
    cacheWrite: cacheWrite.toFixed(SCALE),
    output: output.toFixed(SCALE),
    total: total.toFixed(SCALE),
    currency: 'USD',
  };
}

function component(tokens: number, ratePer1M: Decimal): Decimal {
  return new Decimal(tokens).times(ratePer1M).div(PER_TOKEN_DIVISOR).toDecimalPlaces(SCALE, Decimal.ROUND_HALF_EVEN);
}

export const ZERO_COST: AttemptCost = Object.freeze({
  input: (0).toFixed(SCALE), cachedInput: (0).toFixed(SCALE), cacheWrite: (0).toFixed(SCALE), output: (0).toFixed(SCALE),
  total: (0).toFixed(SCALE), currency: 'USD',
});

export function sumCosts(costs: readonly AttemptCost[]): string {
  return costs.reduce((sum, cost) => sum.plus(cost.total), new Decimal(0)).toFixed(SCALE);
}
