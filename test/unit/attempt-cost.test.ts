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
  test('agrees with exact decimal arithmetic on many usages and prices, rounding half-even beyond six price decimals', () => {
    const Exact = Decimal.clone({ precision: 60 });
    const reference = (tokens: number, rate: string) => new Exact(tokens).times(rate).div(1e6).toDecimalPlaces(12, Decimal.ROUND_HALF_EVEN);
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    const rates = ['0', '1', '2.50', '0.000001', '3.1234567', '15.00000005', '0.0000000000005', '0.0000000000015', '123456.789012345678', '7.5'];
    for (let i = 0; i < 400; i++) {
      const usage = { input: next(2_000_000), cachedInput: next(1_000_000), cacheWrite: next(100_000), output: next(200_000), reasoning: next(50_000) };
      const table: PriceTable = {
        inputPer1M: rates[next(rates.length)], outputPer1M: rates[next(rates.length)], cachedInputPer1M: next(2) ? rates[next(rates.length)] : null,
        cacheWritePer1M: next(2) ? rates[next(rates.length)] : null, reasoningPer1M: next(2) ? rates[next(rates.length)] : null, currency: 'USD',
      };
      const cached = Math.min(usage.cachedInput, usage.input);
      const written = Math.min(usage.cacheWrite, usage.input - cached);
      const reasoning = Math.min(usage.reasoning, usage.output);
      const input = reference(usage.input - cached - written, table.inputPer1M);
      const cachedInput = reference(cached, table.cachedInputPer1M ?? table.inputPer1M);
      const cacheWrite = reference(written, table.cacheWritePer1M ?? table.inputPer1M);
      const output = reference(usage.output - reasoning, table.outputPer1M).plus(reference(reasoning, table.reasoningPer1M ?? table.outputPer1M));
      expect(attemptCost(usage, table)).toEqual({
        input: input.toFixed(12), cachedInput: cachedInput.toFixed(12), cacheWrite: cacheWrite.toFixed(12), output: output.toFixed(12),
        total: input.plus(cachedInput).plus(cacheWrite).plus(output).toFixed(12), currency: 'USD',
      });
    }
    // exactly half a unit of 10⁻¹² rounds to even: 0.5 → 0, 1.5 → 2
    expect(attemptCost({ input: 1, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 }, { ...price, inputPer1M: '0.0000005' }).input).toBe('0.000000000000');
    expect(attemptCost({ input: 1, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 }, { ...price, inputPer1M: '0.0000015' }).input).toBe('0.000000000002');
  });

  test('a price or count outside the plain forms is still priced exactly (the general way)', () => {
    const cost = attemptCost({ input: 1_000, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 }, { ...price, inputPer1M: '2.5e0' });
    expect(cost.input).toBe('0.002500000000');
    expect(attemptCost({ input: 2.5, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 }, price).input).toBe('0.000006250000');
  });

  test('sums totals exactly, also totals not written with twelve places', () => {
    const a = attemptCost({ input: 3, cachedInput: 0, cacheWrite: 0, output: 7, reasoning: 0 }, price);
    expect(sumCosts([a, a, a])).toBe(new Decimal(a.total).times(3).toFixed(12));
    expect(sumCosts([])).toBe('0.000000000000');
    expect(sumCosts([a, { ...a, total: '1.5' }])).toBe(new Decimal(a.total).plus('1.5').toFixed(12));
  });
});
