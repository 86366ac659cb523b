import { readFileSync } from 'node:fs';
import type { DeploymentState, PriceState, PriceTable, ProviderState, ProviderType } from '../../events/index.js';
import { perMillion, PriceMapError, readPriceMap } from '../../modules/catalog/price/litellm-price-map.js';
import { planPriceImport } from '../../modules/catalog/price/price-import-plan.js';
import { parseJsonExactNumbers } from '../../src/cli/exact-json.js';

const FIXTURE = new URL('../../../test/fixtures/prices/litellm-model-prices.json', import.meta.url);
const fixture = () => parseJsonExactNumbers(readFileSync(FIXTURE, 'utf8')) as Record<string, Record<string, unknown>>;

function refusal(map: unknown): PriceMapError {
  try {
    readPriceMap(map);
  } catch (error) {
    if (error instanceof PriceMapError) return error;
    throw error;
  }
  throw new Error('the map was accepted');
}

describe('reading a LiteLLM price map', () => {
  test('malformed maps are refused naming the entry and the field: negative, non-numeric, NaN, not an object', () => {
    const cases: Array<[unknown, string | null, string | null, RegExp]> = [
      [{ 'gpt-x': { input_cost_per_token: '-1e-06', output_cost_per_token: 1 } }, 'gpt-x', 'input_cost_per_token', /^Entry "gpt-x" field input_cost_per_token: -1e-06 is negative\.$/],
      [{ 'gpt-x': { input_cost_per_token: 1, output_cost_per_token: 'abc' } }, 'gpt-x', 'output_cost_per_token', /"abc" is not a number/],
      [{ 'gpt-x': { input_cost_per_token: 'NaN', output_cost_per_token: 1 } }, 'gpt-x', 'input_cost_per_token', /"NaN" is not a number/],
      [{ 'gpt-x': { input_cost_per_token: Number.NaN, output_cost_per_token: 1 } }, 'gpt-x', 'input_cost_per_token', /is not a number/],
      [{ 'gpt-x': { input_cost_per_token: 'Infinity', output_cost_per_token: 1 } }, 'gpt-x', 'input_cost_per_token', /is not a number/],
      [{ 'gpt-x': { input_cost_per_token: true, output_cost_per_token: 1 } }, 'gpt-x', 'input_cost_per_token', /true is not a number/],
      [{ 'gpt-x': { input_cost_per_token: 1, output_cost_per_token: 1, cache_read_input_token_cost: '-0.5' } }, 'gpt-x', 'cache_read_input_token_cost', /is negative/],
      [{ 'gpt-x': { input_cost_per_token: 1, output_cost_per_token: 1, litellm_provider: 7 } }, 'gpt-x', 'litellm_provider', /7 is not a string/],
      [{ 'gpt-x': 'cheap' }, 'gpt-x', null, /^Entry "gpt-x" is not an object\.$/],
      [[{ input_cost_per_token: 1 }], null, null, /must be a JSON object/],
    ];
    for (const [map, entry, field, message] of cases) {
      const error = refusal(map);
      expect([error.entry, error.field]).toEqual([entry, field]);
      expect(error.message).toMatch(message);
    }
    // One bad entry among good ones refuses the whole map.
    expect(refusal({ ...fixture(), 'bad-one': { input_cost_per_token: '-1', output_cost_per_token: 1 } }).entry).toBe('bad-one');
  });

  test('per-token costs become exact per-million decimals, exponent notation included', () => {
    expect(perMillion('m', 'f', '1.5e-07')).toBe('0.15');
    expect(perMillion('m', 'f', '1e-07')).toBe('0.1');
    expect(Number('1e-07') * 1e6).toBe(0.09999999999999999); // what binary floating point would have made of it
    expect(perMillion('m', 'f', '1.3e-08')).toBe('0.013');
    expect(Number('1.3e-08') * 1e6).toBe(0.013000000000000001);
    expect(perMillion('m', 'f', '0.0000044')).toBe('4.4');
    expect(perMillion('m', 'f', '3.625e-09')).toBe('0.003625');
    expect(perMillion('m', 'f', '1E-5')).toBe('10');
    expect(perMillion('m', 'f', '0.0')).toBe('0');
    expect(perMillion('m', 'f', '-0')).toBe('0');
    expect(perMillion('m', 'f', 2.5e-6)).toBe('2.5'); // a JSON number from an API client: its shortest text
    expect(perMillion('m', 'f', '0.000000000000001')).toBe('0.000000001');
    expect(perMillion('m', 'f', '1.23456789012345678901234567e-6')).toBe('1.23456789012345678901234567'); // no rounding, whatever the length
  });

  test('numbers keep their source text through the file reader; strings with digits are left alone', () => {
    expect(parseJsonExactNumbers('{"a": 1.5e-07, "b": [0.1, -2, 3E+2], "c": "x 1.5 \\" 2", "d": true, "e": null}'))
      .toEqual({ a: '1.5e-07', b: ['0.1', '-2', '3E+2'], c: 'x 1.5 " 2', d: true, e: null });
    expect(() => parseJsonExactNumbers('{"a": NaN}')).toThrow(SyntaxError);
    expect(() => parseJsonExactNumbers('{"a": 1,}')).toThrow(SyntaxError);
  });

  test('the fixture: sample_spec ignored; entries without a per-token input and output price counted apart', () => {
    const map = readPriceMap(fixture());
    expect(map.entries.map((e) => e.key)).not.toContain('sample_spec');
    expect(map.unpriced).toEqual(['dall-e-3']);
    expect(map.entries.find((e) => e.key === 'gpt-4o-mini')).toEqual({
      key: 'gpt-4o-mini', provider: 'openai', mode: 'chat', prices: { inputPer1M: '0.15', outputPer1M: '0.6', cachedInputPer1M: '0.075' },
    });
    expect(map.entries.find((e) => e.key === 'o1-mini')!.prices).toEqual({ inputPer1M: '1.1', outputPer1M: '4.4', cachedInputPer1M: '0.55', reasoningPer1M: '4.4' });
  });
});

describe('matching deployments to the map', () => {
  const price = (inputPer1M: string, outputPer1M: string, extra: Partial<PriceTable> = {}): PriceTable =>
    ({ inputPer1M, outputPer1M, cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD', ...extra });
  const providers = new Map<string, ProviderState>((['openai', 'azure-openai', 'anthropic', 'gemini', 'bedrock', 'openai-compatible'] as ProviderType[]).map((type) =>
    [`p-${type}`, { status: 'active', providerId: `p-${type}`, settings: { type, baseUrl: null, credentialRef: null, apiVersion: null, region: null, allowPrivateNetwork: false } }]));
  const deployments = new Map<string, DeploymentState>();
  const prices = new Map<string, PriceState>();
  const deploy = (id: string, type: ProviderType, model: string, table: PriceTable | null, status: 'active' | 'disabled' | 'retired' = 'active') => {
    deployments.set(id, { status, deploymentId: id, settings: { providerId: `p-${type}`, model, region: null, capabilities: ['chat'], contextWindow: 1000, maxOutputTokens: 100, quotaGroup: null, limits: { rpm: null, tpm: null, maxConcurrency: null } } });
    if (table) prices.set(id, { schedule: [{ version: 1, effectiveFrom: new Date('2025-01-01T00:00:00Z'), table }] });
  };
  deploy('a-mini', 'openai', 'gpt-4o-mini', price('0.10', '0.40', { cacheWritePer1M: '0.2' }));
  deploy('b-4o', 'openai', 'gpt-4o', price('2.50', '10', { cachedInputPer1M: '1.25' }));
  deploy('c-azure', 'azure-openai', 'gpt-4o', price('2.5', '10'));
  deploy('d-haiku', 'anthropic', 'claude-3-5-haiku-20241022', null);
  deploy('e-bedrock', 'bedrock', 'anthropic.claude-3-5-haiku-20241022-v1:0', price('1', '5'));
  deploy('f-flash', 'gemini', 'gemini-1.5-flash', price('1', '1'));
  deploy('g-compat', 'openai-compatible', 'gemini-1.5-flash', price('1', '1'));
  deploy('h-local', 'openai-compatible', 'llama-local', price('0', '0'));
  deploy('i-retired', 'openai', 'gpt-4o-mini', price('9', '9'), 'retired');
  deploy('j-anthropic-4o', 'anthropic', 'gpt-4o', price('3', '3'));
  const plan = planPriceImport(readPriceMap(fixture()), { providers, deployments, prices }, new Date('2026-01-01T00:00:00Z'));
  const of = (id: string) => plan.deployments.find((d) => d.deployment === id);

  test('by model and provider type; unstated optional prices keep their current value; equal prices are unchanged', () => {
    expect(of('a-mini')).toMatchObject({ outcome: 'schedule', entry: 'gpt-4o-mini', proposed: price('0.15', '0.6', { cachedInputPer1M: '0.075', cacheWritePer1M: '0.2' }) });
    expect(of('b-4o')).toMatchObject({ outcome: 'unchanged', entry: 'gpt-4o' });
    // Azure's own entry, not OpenAI's price for the same model.
    expect(of('c-azure')).toMatchObject({ outcome: 'schedule', entry: 'azure/gpt-4o', proposed: price('2.75', '11') });
    expect(of('d-haiku')).toMatchObject({ outcome: 'schedule', current: null, proposed: price('0.8', '4', { cachedInputPer1M: '0.08', cacheWritePer1M: '1' }) });
    expect(of('e-bedrock')).toMatchObject({ outcome: 'schedule', entry: 'anthropic.claude-3-5-haiku-20241022-v1:0' });
    // Gemini (AI Studio) takes the gemini entry; an OpenAI-compatible server sees two prices for the model and keeps its own.
    expect(of('f-flash')).toMatchObject({ outcome: 'schedule', entry: 'gemini/gemini-1.5-flash', proposed: price('0.075', '0.3') });
    expect(of('g-compat')).toMatchObject({ outcome: 'ambiguous', entries: ['gemini/gemini-1.5-flash', 'gemini-1.5-flash'] });
    expect(of('h-local')).toMatchObject({ outcome: 'no-entry' });
    // Another provider's entry for the same model name never prices a deployment.
    expect(of('j-anthropic-4o')).toMatchObject({ outcome: 'no-entry' });
    expect(of('i-retired')).toBeUndefined();
  });

  test('an amount the price table cannot hold exactly is refused where it would price a deployment, and only there', () => {
    const map = fixture();
    map['gpt-4o-mini'] = { ...map['gpt-4o-mini'], cache_read_input_token_cost: '7.5000000001e-08' };
    map['o1-mini'] = { ...map['o1-mini'], input_cost_per_token: '1e-16' }; // deployed nowhere: not in the way
    let refused: unknown;
    try {
      planPriceImport(readPriceMap(map), { providers, deployments, prices }, new Date('2026-01-01T00:00:00Z'));
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(PriceMapError);
    expect(refused).toMatchObject({ entry: 'gpt-4o-mini', field: 'cache_read_input_token_cost' });
    expect((refused as Error).message).toBe('Entry "gpt-4o-mini" field cache_read_input_token_cost: 0.075000000001 per million tokens has more than 9 decimal places; the gateway keeps prices exact, never rounded.');
    delete map['gpt-4o-mini'];
    expect(planPriceImport(readPriceMap(map), { providers, deployments, prices }, new Date('2026-01-01T00:00:00Z')).deployments.length).toBeGreaterThan(0);
  });

  test('entries that match no deployment are counted', () => {
    expect(plan.unmatchedEntries).toEqual(['gpt-4.1-nano', 'o1-mini', 'text-embedding-3-small', 'mistral/mistral-large-latest']);
    expect(plan.unpricedEntries).toEqual(['dall-e-3']);
  });
});
