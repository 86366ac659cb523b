import { Decimal } from 'decimal.js';
import type { PriceTable } from '../../events/price-events.js';
import { attemptCost, sumCosts } from '../../modules/inference/pricing/attempt-cost.js';

const price: PriceTable = { inputPer1M: '2.50', outputPer1M: '10.00', cachedInputPer1M: '1.25', cacheWritePer1M: '3.125', reasoningPer1M: null, currency: 'USD' };

describe('attempt cost', () => {
  test('prices plain input, cached input, cache writes and output separately; cached tokens are not billed twice', () => {
    const cost = attemptCost({ input: 1_000, cachedInput: 600, cacheWrite: 100, output: 250, reasoning: 0 }, price);
    // 300 plain × 2.50 + 600 cached × 1.25 + 100 written × 3.125 + 250 × 10.00, per million tokens.
    expect(cost.input).toBe('0.000750000000');
    expect(cost.cachedInput).toBe('0.000750000000');
    expect(cost.cacheWrite).toBe('0.000312500000');
    expect(cost.output).toBe('0.002500000000');
    expect(cost.total).toBe('0.004312500000');
  });

  test('reasoning tokens are output tokens, priced at the reasoning price when the deployment sets one', () => {
    const base = attemptCost({ input: 0, cachedInput: 0, cacheWrite: 0, output: 1_000, reasoning: 400 }, price);
    expect(base.output).toBe('0.010000000000');
    const priced = attemptCost({ input: 0, cachedInput: 0, cacheWrite: 0, output: 1_000, reasoning: 400 }, { ...price, reasoningPer1M: '20' });
    expect(priced.output).toBe(new Decimal(600).times(10).plus(new Decimal(400).times(20)).div(1e6).toFixed(12));
  });

  test('missing cached or cache-write prices fall back to the input price', () => {
    const cost = attemptCost({ input: 100, cachedInput: 40, cacheWrite: 10, output: 0, reasoning: 0 }, { ...price, cachedInputPer1M: null, cacheWritePer1M: null });
    expect(cost.total).toBe(new Decimal(100).times('2.50').div(1e6).toFixed(12));
  });

  test('sums of many small costs are exact (no binary floating point)', () => {
    const tiny = attemptCost({ input: 1, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 }, { ...price, inputPer1M: '0.1', outputPer1M: '0.2' });
    expect(tiny.total).toBe('0.000000300000');
    expect(sumCosts(Array(10).fill(tiny))).toBe('0.000003000000');
    // The float way drifts: 0.1 + 0.2 !== 0.3.
    expect(0.1 + 0.2).not.toBe(0.3);
  });

  test('counts never exceed what was used: cached larger than input is clamped', () => {
    const cost = attemptCost({ input: 10, cachedInput: 50, cacheWrite: 0, output: 0, reasoning: 0 }, price);
    expect(cost.total).toBe(new Decimal(10).times('1.25').div(1e6).toFixed(12));
  });
});
