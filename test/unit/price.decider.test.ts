import type { PriceEvent, PriceTable } from '../../events/price-events.js';
import { priceAt } from '../../events/price-state.js';
import { priceDecider } from '../../modules/catalog/price/price.decider.js';
import { priceInEffect, type ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { SPEC_NOW, deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(priceDecider);
const deploymentId = 'gpt-4o-mini';

const table = (overrides: Partial<PriceTable> = {}): PriceTable => ({
  inputPer1M: '0.15', outputPer1M: '0.60', cachedInputPer1M: '0.075', cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD',
  ...overrides,
});
const at = (offsetMs: number) => new Date(SPEC_NOW.getTime() + offsetMs);
const scheduled = (from: Date, t = table()): PriceEvent => ({
  type: 'PriceScheduled', data: { deploymentId, effectiveFrom: from.toISOString(), ...t },
});
const schedule = (from: Date, t = table()) => ({ type: 'SchedulePrice' as const, deploymentId, effectiveFrom: from, table: t });

describe('price aggregate', () => {
  test('a first price is scheduled from now', () => {
    spec.given([]).when(schedule(SPEC_NOW)).then([scheduled(SPEC_NOW)]);
  });
  test('a future price is scheduled next to the current one; history stays as it was', () => {
    const later = at(86_400_000);
    spec.given([scheduled(at(-86_400_000))]).when(schedule(later, table({ inputPer1M: '0.10' })))
      .then([scheduled(later, table({ inputPer1M: '0.10' }))]);
  });
  test('the same price at the same instant again changes nothing (decimal-equal counts as equal)', () => {
    spec.given([scheduled(SPEC_NOW)]).when(schedule(SPEC_NOW, table({ inputPer1M: '0.150' }))).thenNothing();
  });
  test('a different price at an instant already scheduled is refused: prices are never edited', () => {
    spec.given([scheduled(at(60_000))]).when(schedule(at(60_000), table({ outputPer1M: '0.70' }))).thenThrows('price_exists', 409);
  });
  test('a price starting in the past is refused: history is never rewritten', () => {
    spec.given([]).when(schedule(at(-3_600_000))).thenThrows('price_in_past', 422);
  });
  test('a start a few seconds in the past is tolerated (clock skew between operator and gateway)', () => {
    spec.given([]).when(schedule(at(-5_000))).then([scheduled(at(-5_000))]);
  });
  const invalid: Array<[string, Partial<PriceTable>]> = [
    ['a negative price', { inputPer1M: '-1' }],
    ['a binary float written as a number', { outputPer1M: 0.6 as unknown as string }],
    ['more than 9 decimal places', { inputPer1M: '0.0000000001' }],
    ['a currency other than USD', { currency: 'EUR' as 'USD' }],
    ['garbage', { cachedInputPer1M: 'cheap' }],
  ];
  test.each(invalid)('refuses %s', (_name, overrides) => {
    spec.given([]).when(schedule(SPEC_NOW, table(overrides))).thenThrows('invalid_price', 422);
  });

  test('versions follow the stream order and the price in effect is the latest start not after the instant', () => {
    const history = [scheduled(at(0)), scheduled(at(10_000), table({ inputPer1M: '0.20' })), scheduled(at(5_000), table({ inputPer1M: '0.17' }))];
    const state = history.reduce(priceDecider.evolve, priceDecider.initialState());
    expect(state.schedule.map((p) => p.version)).toEqual([1, 2, 3]);
    expect(priceAt(state, at(-1))).toBeNull();
    expect(priceAt(state, at(4_999))?.version).toBe(1);
    expect(priceAt(state, at(5_000))?.version).toBe(3);
    expect(priceAt(state, at(9_999))?.table.inputPer1M).toBe('0.17');
    expect(priceAt(state, at(10_000))?.version).toBe(2);
  });

  test('priceInEffect (what admission uses) switches to a future price exactly at its start', () => {
    const state = [scheduled(at(0)), scheduled(at(2_000), table({ inputPer1M: '0.30' }))].reduce(priceDecider.evolve, priceDecider.initialState());
    const deployment = { prices: [...state.schedule].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime()) } as unknown as ResolvedDeployment;
    expect(priceInEffect(deployment, at(1_999))?.version).toBe(1);
    expect(priceInEffect(deployment, at(2_000))?.version).toBe(2);
    expect(priceInEffect(deployment, at(-1))).toBeNull();
  });

  test('admission and the admin views answer with the same price, whatever order the schedule is in', () => {
    const history = [scheduled(at(0)), scheduled(at(10_000), table({ inputPer1M: '0.20' })), scheduled(at(5_000), table({ inputPer1M: '0.17' })), scheduled(at(5_000), table({ inputPer1M: '0.18' }))];
    const state = history.reduce(priceDecider.evolve, priceDecider.initialState());
    const deployment = { prices: state.schedule } as unknown as ResolvedDeployment;
    for (const instant of [-1, 0, 4_999, 5_000, 9_999, 10_000, 20_000]) {
      expect(priceInEffect(deployment, at(instant))?.version ?? null).toBe(priceAt(state, at(instant))?.version ?? null);
    }
    // Two prices starting at the same instant: the one scheduled later is in effect.
    expect(priceInEffect(deployment, at(5_000))?.table.inputPer1M).toBe('0.18');
  });
});
