import { DEFAULT_KEY_SCOPES } from '../../modules/access/api-key/api-key.decider.js';
import { readBudgetMapping } from '../../modules/access/tenant/tenant-definition.js';
import { aliasDefinitionOf, type PublishAliasDto } from '../../modules/catalog/admin/alias.dto.js';
import { ALIAS_DEFAULTS } from '../../modules/catalog/alias/alias.decider.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { DefinitionReader } from '../../src/kernel/definitions/definition-reader.js';

/**
 * One default per knob: an alias, a budget or a key declared with every optional member left out is the same
 * whether it comes from the configuration file or the admin API, so `switchyard apply` after an operator's
 * API call (or the reverse) sees nothing to change.
 */
describe('defaults of members left out', () => {
  const config = parseGatewayConfig(`
providers:
  - { id: up, type: openai-compatible, baseUrl: "https://llm.example.com/v1", apiKey: "env:OMITTED_DEFAULTS_KEY" }
deployments:
  - { id: d1, provider: up, model: m1, price: { inputPer1M: "1", outputPer1M: "2" } }
  - { id: d2, provider: up, model: m2, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - { name: chat, routes: [{ deployment: d1 }, { deployment: d2 }] }
tenants:
  - { id: acme, budget: { monthlyUsd: "500" } }
apiKeys:
  - { id: k1, tenant: acme, key: "env:OMITTED_DEFAULTS_GATEWAY_KEY" }
`);

  test('an alias: the file and the admin API give the same definition', () => {
    const alias = config.aliases[0];
    const fromFile = {
      strategy: alias.strategy,
      routes: alias.routes.map((r) => ({ deploymentId: r.deployment, priority: r.priority, weight: r.weight })),
      policy: alias.policy,
      visibility: alias.visibility,
    };
    const fromApi = aliasDefinitionOf({ routes: [{ deployment: 'd1' }, { deployment: 'd2' }] } as PublishAliasDto);
    expect(fromFile).toEqual(fromApi);
    expect(fromApi.strategy).toBe(ALIAS_DEFAULTS.strategy);
    expect(fromApi.visibility).toBe(ALIAS_DEFAULTS.visibility);
    expect(fromApi.routes.map((r) => [r.priority, r.weight])).toEqual([
      [ALIAS_DEFAULTS.routePriority, ALIAS_DEFAULTS.routeWeight],
      [ALIAS_DEFAULTS.routePriority, ALIAS_DEFAULTS.routeWeight],
    ]);
  });

  test('a budget: the file and the admin API give the same budget', () => {
    const reader = new DefinitionReader();
    const fromApi = readBudgetMapping(reader, { monthlyUsd: '500' }, '');
    expect(reader.problems).toEqual([]);
    expect(config.tenants[0].budget).toEqual(fromApi);
    expect(fromApi).toEqual({ monthlyUsd: '500', softPct: 80, enforcement: 'hard' });
  });

  test("a key's scopes: the file gives the admin API's default, as a copy", () => {
    expect(config.apiKeys[0].scopes).toEqual([...DEFAULT_KEY_SCOPES]);
    expect(config.apiKeys[0].scopes).not.toBe(DEFAULT_KEY_SCOPES);
  });
});
