import { Decimal } from 'decimal.js';
import type { AttemptCost, PriceTable, TokenUsage } from '../../../events/index.js';

const PER_TOKEN_DIVISOR = new Decimal(1_000_000);
/** Ledger precision (numeric(24,12)); each component is rounded half-even once, so totals add up exactly. */
const SCALE = 12;

/**
 * The cost of one attempt, in exact decimals. Cached input is priced at the cached price and is not
 * also counted as plain input; cache writes likewise; reasoning tokens are output tokens priced at the
 * reasoning price when the deployment sets one.
 *
 * Every attempt is priced on the serving path, so the usual case is integer arithmetic: prices are
 * plain decimals (`\d+(\.\d+)?`, as configuration and the admin API accept them) and token counts safe
 * integers, and the cost is counted in units of 10⁻¹² USD as a bigint — exact, and rounded half-even
 * where a price has more than six decimals. Anything else goes the general (Decimal) way.
 */
export function attemptCost(usage: TokenUsage, price: PriceTable): AttemptCost {
  const cached = Math.min(usage.cachedInput, usage.input);
  const written = Math.min(usage.cacheWrite, usage.input - cached);
  const plainInput = usage.input - cached - written;
  const reasoning = Math.min(usage.reasoning, usage.output);
  const tokens = [plainInput, cached, written, usage.output - reasoning, reasoning];
  return integerCost(tokens, price) ?? decimalCost(tokens, price);
}

function integerCost([plainInput, cached, written, plainOutput, reasoning]: number[], price: PriceTable): AttemptCost | null {
  if (![plainInput, cached, written, plainOutput, reasoning].every(isTokenCount)) return null;
  const inputRate = integerRate(price.inputPer1M);
  const outputRate = integerRate(price.outputPer1M);
  const cachedRate = price.cachedInputPer1M !== null ? integerRate(price.cachedInputPer1M) : inputRate;
  const writeRate = price.cacheWritePer1M !== null ? integerRate(price.cacheWritePer1M) : inputRate;
  const reasoningRate = price.reasoningPer1M !== null ? integerRate(price.reasoningPer1M) : outputRate;
  if (!inputRate || !outputRate || !cachedRate || !writeRate || !reasoningRate) return null;
  const input = integerComponent(plainInput, inputRate);
  const cachedInput = integerComponent(cached, cachedRate);
  const cacheWrite = integerComponent(written, writeRate);
  const output = integerComponent(plainOutput, outputRate) + integerComponent(reasoning, reasoningRate);
  return {
    input: picoToFixed(input),
    cachedInput: picoToFixed(cachedInput),
    cacheWrite: picoToFixed(cacheWrite),
    output: picoToFixed(output),
    total: picoToFixed(input + cachedInput + cacheWrite + output),
    currency: 'USD',
  };
}

function decimalCost([plainInput, cached, written, plainOutput, reasoning]: number[], price: PriceTable): AttemptCost {
  const inputRate = new Decimal(price.inputPer1M);
  const outputRate = new Decimal(price.outputPer1M);
  const cachedRate = price.cachedInputPer1M !== null ? new Decimal(price.cachedInputPer1M) : inputRate;
  const writeRate = price.cacheWritePer1M !== null ? new Decimal(price.cacheWritePer1M) : inputRate;
  const reasoningRate = price.reasoningPer1M !== null ? new Decimal(price.reasoningPer1M) : outputRate;
  const input = component(plainInput, inputRate);
  const cachedInput = component(cached, cachedRate);
  const cacheWrite = component(written, writeRate);
  const output = component(plainOutput, outputRate).plus(component(reasoning, reasoningRate));
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

function isTokenCount(tokens: number): boolean {
  return Number.isSafeInteger(tokens) && tokens >= 0;
}

/** A price per million tokens as `units / 10^decimals`. */
interface IntegerRate {
  units: bigint;
  decimals: number;
}

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;
/** Parsed prices by their text: a node has a handful; the bound only keeps odd input from growing it. */
const rates = new Map<string, IntegerRate | null>();
const MAX_RATES = 1024;

function integerRate(text: string): IntegerRate | null {
  let rate = rates.get(text);
  if (rate !== undefined) return rate;
  const match = typeof text === 'string' ? PLAIN_DECIMAL.exec(text) : null;
  rate = match ? { units: BigInt(match[1] + (match[2] ?? '')), decimals: (match[2] ?? '').length } : null;
  if (rates.size < MAX_RATES) rates.set(text, rate);
  return rate;
}

/**
 * `tokens × rate / 10⁶` in units of 10⁻¹² USD: `tokens × units × 10^(6 − decimals)`, exact for up to six
 * decimals; beyond, divided by `10^(decimals − 6)` and rounded half-even.
 */
function integerComponent(tokens: number, rate: IntegerRate): bigint {
  const product = BigInt(tokens) * rate.units;
  if (rate.decimals <= SCALE - 6) return product * 10n ** BigInt(SCALE - 6 - rate.decimals);
  const divisor = 10n ** BigInt(rate.decimals - (SCALE - 6));
  const quotient = product / divisor;
  const twice = (product % divisor) * 2n;
  if (twice > divisor || (twice === divisor && quotient % 2n === 1n)) return quotient + 1n;
  return quotient;
}

/** Units of 10⁻¹² as a decimal string with 12 places, as Decimal's `toFixed(12)` writes it. */
function picoToFixed(units: bigint): string {
  const digits = units.toString().padStart(SCALE + 1, '0');
  return `${digits.slice(0, -SCALE)}.${digits.slice(-SCALE)}`;
}

export const ZERO_COST: AttemptCost = Object.freeze({
  input: (0).toFixed(SCALE), cachedInput: (0).toFixed(SCALE), cacheWrite: (0).toFixed(SCALE), output: (0).toFixed(SCALE),
  total: (0).toFixed(SCALE), currency: 'USD',
});

const FIXED_12 = /^(\d+)\.(\d{12})$/;

/** The sum of the attempts' totals (each written with 12 places by `attemptCost`), exactly. */
export function sumCosts(costs: readonly AttemptCost[]): string {
  let sum = 0n;
  for (const cost of costs) {
    const match = FIXED_12.exec(cost.total);
    if (!match) return costs.reduce((total, c) => total.plus(c.total), new Decimal(0)).toFixed(SCALE);
    sum += BigInt(match[1] + match[2]);
  }
  return picoToFixed(sum);
}
