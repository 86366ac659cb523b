import { attemptFinishedV1ToV2 } from '../../events/attempt-finished-v2.js';
import { SCHEMA_VERSIONS, upcasters } from '../../events/index.js';

/**
 * Issue 32, item 3: events are immutable, their reading is not. AttemptFinished v1 trusted a provider's
 * usage; the v1 → v2 step applies the usage rule to what was recorded, so an existing log rebuilds.
 */
const v1 = (usage: Record<string, unknown>, cost: Record<string, unknown> = {}) => ({
  requestId: 'r1', attempt: 1, tenantId: 't', keyId: 'k', alias: 'chat', deploymentId: 'd', providerId: 'p', model: 'm',
  outcome: 'success', errorClass: null, httpStatus: 200, usageEvidence: 'provider', priceVersion: 1, latencyMs: 5, ttftMs: null,
  providerRequestId: null, routing: { strategy: 'priority', candidates: ['d'], reason: 'x' },
  usage: { input: 100, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0, ...usage },
  cost: { input: '0.000250000000', cachedInput: '0.000000000000', cacheWrite: '0.000000000000', output: '0.000200000000', total: '0.000450000000', currency: 'USD', ...cost },
});

describe('AttemptFinished v1 → v2', () => {
  test('is the registered step, and the schema in force is 2', () => {
    expect(SCHEMA_VERSIONS.AttemptFinished).toBe(2);
    const sound = v1({});
    expect(upcasters.upcast('AttemptFinished', 1, sound)).toEqual({ schemaVersion: 2, data: sound });
    // A v2 event is read as it is.
    expect(upcasters.upcast('AttemptFinished', 2, sound).data).toBe(sound);
  });

  test('a sound event is returned as it is (the same object: nothing is copied on the read path)', () => {
    const sound = v1({ cachedInput: 40, reasoning: 5 });
    expect(attemptFinishedV1ToV2(sound)).toBe(sound);
  });

  test('the issue\'s event: 3e9 prompt tokens priced into a cost no column could hold → the count and its cost part read as 0', () => {
    const read = attemptFinishedV1ToV2(v1({ input: 3_000_000_000 }, { input: '7500.000000000000', total: '7500.000200000000' }));
    expect(read.usage).toEqual({ input: 0, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0 });
    expect(read.cost).toEqual({ input: '0.000000000000', cachedInput: '0.000000000000', cacheWrite: '0.000000000000', output: '0.000200000000', total: '0.000200000000', currency: 'USD' });
    expect(read.usageEvidence).toBe('implausible');
    expect(read.diagnostics).toEqual({ implausibleUsage: { reason: 'recorded before the usage boundary: usage.input is not a plausible token count', reported: { 'usage.input': '3000000000' } } });
  });

  test.each([
    ['negative output (billed −$1)', { output: -1_000_000 }, { output: '-10.000000000000', total: '-9.999750000000' }, 'output'],
    ['fractional input', { input: 10.7 }, {}, 'input'],
    ['1e308 input', { input: 1e308 }, { input: `${'1'.padEnd(300, '0')}.000000000000` }, 'input'],
    ['a string count', { output: '100' }, {}, 'output'],
  ])('%s: never negative, never absurd, the total the sum of the parts', (_name, usage, cost, field) => {
    const read = attemptFinishedV1ToV2(v1(usage, cost));
    const counts = read.usage as Record<string, number>;
    for (const value of Object.values(counts)) expect(Number.isSafeInteger(value) && value >= 0).toBe(true);
    expect(counts[field]).toBe(0);
    const parts = read.cost as Record<string, string>;
    for (const part of ['input', 'cachedInput', 'cacheWrite', 'output', 'total']) expect(parts[part]).toMatch(/^\d+\.\d{12}$/);
    const sum = ['input', 'cachedInput', 'cacheWrite', 'output'].reduce((s, p) => s + Number(parts[p]), 0);
    expect(Number(parts.total)).toBeCloseTo(sum, 12);
    expect(read.usageEvidence).toBe('implausible');
  });

  test('a cost part that is not a decimal (with sound counts) reads as 0, and says so', () => {
    const read = attemptFinishedV1ToV2(v1({}, { output: 'NaN', total: 'NaN' }));
    expect(read.cost).toMatchObject({ output: '0.000000000000', total: '0.000250000000' });
    expect((read.diagnostics as any).implausibleUsage.reported).toEqual({ 'cost.output': '"NaN"' });
  });
});
