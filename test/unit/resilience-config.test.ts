import { ConfigurationError, readEnvironment } from '../../src/config/environment.js';
import { ConfigValidationError, parseGatewayConfig } from '../../src/config/gateway-config.js';
import type { AliasDefinition } from '../../events/alias-state.js';
import { aliasDefinitionProblem } from '../../modules/catalog/alias/alias.decider.js';
import { DEFAULT_RESILIENCE, resolveResilience } from '../../modules/inference/resilience/resilience-settings.js';
import { DEFAULT_ADMISSION, resolveAdmission } from '../../modules/limits/admission-settings.js';

const yaml = (policy: string, strategy = 'priority') => `
providers:
  - { id: p, type: openai-compatible, baseUrl: "https://llm.example.com/v1", apiKey: "env:X" }
deployments:
  - { id: stable, provider: p, model: m1, price: { inputPer1M: "1", outputPer1M: "2" } }
  - { id: next, provider: p, model: m2, price: { inputPer1M: "1", outputPer1M: "2" } }
  - { id: elsewhere, provider: p, model: m3, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - name: chat
    strategy: ${strategy}
    routes:
      - { deployment: stable }
      - { deployment: next }
${policy}
`;

function problems(text: string): string[] {
  try {
    parseGatewayConfig(text);
    return [];
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
}

describe('alias routing configuration', () => {
  test('a canary and the sticky strategy pass from YAML into the alias policy', () => {
    const config = parseGatewayConfig(yaml('    policy:\n      canary: { deployment: next, percent: 2.5, salt: "2025-06" }', 'sticky'));
    expect(config.aliases[0].strategy).toBe('sticky');
    expect(config.aliases[0].policy.canary).toEqual({ deploymentId: 'next', percent: 2.5, salt: '2025-06' });
  });

  test('without a canary the policy has no canary key, so aliases published before canaries existed compare equal', () => {
    expect('canary' in parseGatewayConfig(yaml('')).aliases[0].policy).toBe(false);
  });

  test.each([
    ['a deployment that is not a route', '      canary: { deployment: elsewhere, percent: 5 }', /canary.deployment: 'elsewhere' is not one of this alias's routes/],
    ['a percentage above 100', '      canary: { deployment: next, percent: 120 }', /canary.percent: must be a number from 0 to 100/],
    ['an unknown field', '      canary: { deployment: next, percent: 5, share: 3 }', /canary.share: unknown field/],
  ])('a canary with %s is refused with its YAML path', (_name, line, message) => {
    expect(problems(yaml(`    policy:\n${line}`)).join('\n')).toMatch(message);
  });

  test('an unknown strategy is refused', () => {
    expect(problems(yaml('', 'fastest')).join('\n')).toMatch(/strategy: must be one of priority, weighted, least-latency, least-cost, sticky/);
  });

  test('the alias aggregate refuses what the YAML parser would (the admin API goes straight to it)', () => {
    const definition = (policy: Partial<AliasDefinition['policy']>): AliasDefinition => ({
      strategy: 'priority',
      routes: [{ deploymentId: 'stable', priority: 0, weight: 1 }, { deploymentId: 'next', priority: 0, weight: 1 }],
      policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [], ...policy },
      visibility: 'public',
    });
    expect(aliasDefinitionProblem('chat', definition({ canary: { deploymentId: 'next', percent: 10, salt: '' } }))).toBeNull();
    expect(aliasDefinitionProblem('chat', definition({ canary: { deploymentId: 'elsewhere', percent: 10, salt: '' } }))).toMatch(/not one of the alias's routes/);
    expect(aliasDefinitionProblem('chat', definition({ canary: { deploymentId: 'next', percent: -1, salt: '' } }))).toMatch(/percent/);
    expect(aliasDefinitionProblem('chat', definition({ ttftTimeoutMs: 0 }))).toMatch(/ttftTimeoutMs must be a positive integer/);
    expect(aliasDefinitionProblem('chat', { ...definition({}), strategy: 'sticky' })).toBeNull();
  });
});

describe('resilience and admission settings from the environment', () => {
  test('unset variables keep the defaults', () => {
    const environment = readEnvironment({});
    expect(resolveResilience(environment.resilience)).toEqual(DEFAULT_RESILIENCE);
    expect(resolveAdmission(environment.admission)).toEqual(DEFAULT_ADMISSION);
  });

  test('each variable overrides its own setting only', () => {
    const environment = readEnvironment({
      SWITCHYARD_TTFT_TIMEOUT_MS: '5000',
      SWITCHYARD_REQUEST_TIMEOUT_MS: '60000',
      SWITCHYARD_MAX_ATTEMPTS: '4',
      SWITCHYARD_BREAKER_FAILURE_RATE: '0.25',
      SWITCHYARD_BREAKER_COOLDOWN_MS: '10000',
      SWITCHYARD_MAX_CONCURRENT_REQUESTS: '0',
      SWITCHYARD_MAX_CONCURRENT_STREAMS: '64',
    });
    const resilience = resolveResilience(environment.resilience);
    expect(resilience.deadlines).toEqual({ ...DEFAULT_RESILIENCE.deadlines, ttftTimeoutMs: 5000, requestTimeoutMs: 60000 });
    expect(resilience.retry).toEqual({ ...DEFAULT_RESILIENCE.retry, maxAttempts: 4 });
    expect(resilience.breaker).toEqual({ ...DEFAULT_RESILIENCE.breaker, failureRateThreshold: 0.25, cooldownMs: 10000 });
    expect(resolveAdmission(environment.admission)).toEqual({ ...DEFAULT_ADMISSION, maxConcurrentRequests: null, maxConcurrentStreams: 64 });
  });

  test.each([
    ['SWITCHYARD_TTFT_TIMEOUT_MS', '0'],
    ['SWITCHYARD_MAX_ATTEMPTS', 'three'],
    ['SWITCHYARD_BREAKER_FAILURE_RATE', '1.5'],
    ['SWITCHYARD_ADMISSION_QUEUE_DEPTH', '10'], // a queue without a wait deadline is unbounded
  ])('%s=%s is refused at start', (name, value) => {
    expect(() => readEnvironment({ [name]: value })).toThrow(ConfigurationError);
  });
});
