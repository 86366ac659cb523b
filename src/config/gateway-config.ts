import { parse } from 'yaml';
import { ROUTING_STRATEGIES, type AliasCanary, type AliasPolicy, type AliasRateLimits, type RoutingStrategy } from '../../events/alias-events.js';
import { CAPABILITIES, type Capability, type DeploymentLimits } from '../../events/deployment-events.js';
import type { KeyScope } from '../../events/api-key-events.js';
import type { PriceTable } from '../../events/price-events.js';
import { PROVIDER_TYPES, type ProviderType } from '../../events/provider-events.js';
import type { TenantBudget, TenantLimits } from '../../events/tenant-events.js';
import { type ContentPolicyDeclaration, readApiKey, readContentPolicy, readContentPolicyReference, readTenant } from '../../modules/access/index.js';
import { readAliasLimitsMapping, readLimits } from '../../modules/admin/index.js';
import { ALIAS_DEFAULTS } from '../../modules/catalog/index.js';
import { type DefinitionNode, DefinitionReader, isDefinitionNode } from '../kernel/index.js';
import {
  ALIAS_FIELDS, CANARY_FIELDS, DEPLOYMENT_DEFAULTS, DEPLOYMENT_FIELDS, GATEWAY_CONFIG_FIELDS,
  POLICY_FIELDS, PRICE_FIELDS, PROVIDER_FIELDS, ROUTE_FIELDS, fieldNames,
} from './gateway-config-schema.js';

/**
 * The declarative configuration (DESIGN §8), validated, with every reference checked. Which fields each
 * mapping accepts, and the defaults of its fields, come from the schema (gateway-config-schema.ts);
 * tenants and keys are read by the readers the admin API uses too (modules/access).
 */
export interface GatewayConfig {
  providers: Array<{ id: string; type: ProviderType; baseUrl: string | null; apiKey: string | null; apiVersion: string | null; region: string | null; allowPrivateNetwork: boolean }>;
  deployments: Array<{
    id: string; provider: string; model: string; region: string | null; capabilities: Capability[]; contextWindow: number;
    maxOutputTokens: number; quotaGroup: string | null; limits: DeploymentLimits; price: PriceTable & { effectiveFrom: string | null };
    disabled: boolean | null;
  }>;
  aliases: Array<{
    name: string; strategy: RoutingStrategy; routes: Array<{ deployment: string; priority: number; weight: number }>;
    policy: AliasPolicy; visibility: 'public' | 'private';
  }>;
  /** Content policies, attached by id (`contentPolicy`) to tenants, keys and aliases. */
  contentPolicies: ContentPolicyDeclaration[];
  tenants: Array<{ id: string; name: string; limits: TenantLimits; budget: TenantBudget | null; contentPolicy: string | null }>;
  apiKeys: Array<{
    id: string; tenant: string; key: string; aliases: string[]; scopes: KeyScope[]; limits: TenantLimits; expiresAt: string | null; budget: TenantBudget | null;
    contentPolicy: string | null;
  }>;
}

/** Every problem found, each naming its YAML path, so one run shows them all. */
/**
 * A file refers only to what it declares (docs/configuration.md): what the store already holds does not count,
 * so a file that names a tenant made through the API says how to get its declaration.
 */
const NOT_IN_FILE = ' (a file refers only to what it declares; `switchyard config export` writes the running definitions as one)';

export class ConfigValidationError extends Error {
  override readonly name = 'ConfigValidationError';
  /**
   * @param problems each as the file's reader says it (`aliases[0].routes[0].deployment: names …`)
   * @param fields the same problems with their paths apart, where they have one (the admin API answers with them)
   */
  constructor(readonly problems: string[], readonly fields: ReadonlyArray<{ path: string; message: string }> = problems.map((message) => ({ path: '', message }))) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Node = DefinitionNode;

export function parseGatewayConfig(text: string, source = 'config'): GatewayConfig {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    // The parser's first line ends with a colon that introduces the lines of the file it quotes below it.
    throw new ConfigValidationError([`${source}: not valid YAML (${(error as Error).message.split('\n')[0].replace(/:\s*$/, '')})`]);
  }
  const reader = new Reader();
  const root = raw === null || raw === undefined ? {} : raw;
  if (!isDefinitionNode(root)) throw new ConfigValidationError([`${source}: the top level must be a mapping`]);
  reader.known(root, '', fieldNames(GATEWAY_CONFIG_FIELDS));

  const providers = reader.list(root, 'providers').map(([node, path]) => ({
    id: reader.id(node, path),
    type: reader.oneOf(node, path, 'type', PROVIDER_TYPES, null) as ProviderType,
    baseUrl: reader.optionalString(node, path, 'baseUrl'),
    apiKey: reader.optionalString(node, path, 'apiKey'),
    apiVersion: reader.optionalString(node, path, 'apiVersion'),
    region: reader.optionalString(node, path, 'region'),
    allowPrivateNetwork: reader.optionalBoolean(node, path, 'allowPrivateNetwork') ?? false,
    ...reader.known(node, path, fieldNames(PROVIDER_FIELDS)),
  }));
  providers.forEach((p, i) => {
    if (p.apiKey && !/^(env|file):.+/.test(p.apiKey)) {
      reader.problem(`providers[${i}].apiKey`, 'must be a secret reference (env:NAME or file:PATH), never the key itself');
    }
  });
  const providerIds = new Set(providers.map((p) => p.id));

  const deployments = reader.list(root, 'deployments').map(([node, path]) => {
    reader.known(node, path, fieldNames(DEPLOYMENT_FIELDS));
    const provider = reader.string(node, path, 'provider');
    if (provider && !providerIds.has(provider)) reader.problem(`${path}.provider`, `names provider '${provider}', which this file does not declare${NOT_IN_FILE}`);
    const capabilities = reader.choiceList(node, path, 'capabilities', CAPABILITIES, 'capability') ?? [...DEPLOYMENT_DEFAULTS.capabilities];
    const priceNode = node.price;
    if (!isDefinitionNode(priceNode)) reader.problem(`${path}.price`, 'is required (inputPer1M and outputPer1M at least)');
    const price = isDefinitionNode(priceNode) ? priceNode : {};
    reader.known(price, `${path}.price`, fieldNames(PRICE_FIELDS));
    return {
      id: reader.id(node, path),
      provider,
      model: reader.string(node, path, 'model'),
      region: reader.optionalString(node, path, 'region'),
      capabilities: capabilities as Capability[],
      contextWindow: reader.integer(node, path, 'contextWindow', DEPLOYMENT_DEFAULTS.contextWindow),
      maxOutputTokens: reader.integer(node, path, 'maxOutputTokens', DEPLOYMENT_DEFAULTS.maxOutputTokens),
      quotaGroup: reader.optionalString(node, path, 'quotaGroup'),
      limits: readLimits(reader, node, path),
      price: {
        inputPer1M: reader.decimal(price, `${path}.price`, 'inputPer1M', PRICE_FIELDS.inputPer1M.required === true)!,
        outputPer1M: reader.decimal(price, `${path}.price`, 'outputPer1M', PRICE_FIELDS.outputPer1M.required === true)!,
        cachedInputPer1M: reader.decimal(price, `${path}.price`, 'cachedInputPer1M', false),
        cacheWritePer1M: reader.decimal(price, `${path}.price`, 'cacheWritePer1M', false),
        reasoningPer1M: reader.decimal(price, `${path}.price`, 'reasoningPer1M', false),
        currency: 'USD' as const,
        effectiveFrom: reader.timestamp(price, `${path}.price`, 'effectiveFrom'),
      },
      disabled: reader.optionalBoolean(node, path, 'disabled'),
    };
  });
  const deploymentIds = new Set(deployments.map((d) => d.id));

  const aliases = reader.list(root, 'aliases').map(([node, path]) => {
    reader.known(node, path, fieldNames(ALIAS_FIELDS));
    const routes = reader.list(node, 'routes', path).map(([route, routePath]) => {
      reader.known(route, routePath, fieldNames(ROUTE_FIELDS));
      const deployment = reader.string(route, routePath, 'deployment');
      if (deployment && !deploymentIds.has(deployment)) reader.problem(`${routePath}.deployment`, `names deployment '${deployment}', which this file does not declare${NOT_IN_FILE}`);
      return { deployment, priority: reader.integer(route, routePath, 'priority', ALIAS_DEFAULTS.routePriority), weight: reader.number(route, routePath, 'weight', ALIAS_DEFAULTS.routeWeight) };
    });
    if (routes.length === 0) reader.problem(`${path}.routes`, 'needs at least one route');
    const policyNode = isDefinitionNode(node.policy) ? node.policy : {};
    reader.known(policyNode, `${path}.policy`, fieldNames(POLICY_FIELDS));
    const budgetDowngrade = reader.optionalString(policyNode, `${path}.policy`, 'budgetDowngrade');
    const canary = reader.canary(policyNode, `${path}.policy`, new Set(routes.map((r) => r.deployment)));
    const aliasLimits = reader.aliasLimits(policyNode, `${path}.policy`);
    const contentPolicy = readContentPolicyReference(reader, node, path);
    return {
      name: reader.string(node, path, 'name'),
      strategy: reader.oneOf(node, path, 'strategy', ROUTING_STRATEGIES, ALIAS_DEFAULTS.strategy) as RoutingStrategy,
      routes,
      policy: {
        requiredCapabilities: reader.stringList(policyNode, `${path}.policy`, 'requiredCapabilities') ?? [],
        maxAttempts: reader.optionalInteger(policyNode, `${path}.policy`, 'maxAttempts'),
        ttftTimeoutMs: reader.optionalInteger(policyNode, `${path}.policy`, 'ttftTimeoutMs'),
        regions: reader.stringList(policyNode, `${path}.policy`, 'regions') ?? [],
        // Left out when absent, so aliases published before canaries existed compare equal.
        ...(canary ? { canary } : {}),
        // Only the opt-out is written: the cache is on by default.
        ...(reader.optionalBoolean(policyNode, `${path}.policy`, 'cache') === false ? { cache: false as const } : {}),
        ...(aliasLimits ? { limits: aliasLimits } : {}),
        ...(budgetDowngrade ? { budgetDowngrade } : {}),
        // Written on the alias (`contentPolicy:`, as on tenants and keys), recorded with its policy.
        ...(contentPolicy ? { contentPolicy } : {}),
      },
      visibility: reader.oneOf(node, path, 'visibility', ['public', 'private'] as const, ALIAS_DEFAULTS.visibility) as 'public' | 'private',
    };
  });

  const contentPolicies = reader.list(root, 'contentPolicies').map(([node, path]) => readContentPolicy(reader, node, path));
  const tenants = reader.list(root, 'tenants').map(([node, path]) => readTenant(reader, node, path));
  const tenantIds = new Set(tenants.map((t) => t.id));

  const apiKeys = reader.list(root, 'apiKeys').map(([node, path]) => {
    const { id, tenant, key, ...grant } = readApiKey(reader, node, path, 'file');
    if (tenant && !tenantIds.has(tenant)) reader.problem(`${path}.tenant`, `names tenant '${tenant}', which this file does not declare${NOT_IN_FILE}`);
    return { id: id ?? '', tenant, key: key ?? '', ...grant };
  });

  const aliasNames = new Set(aliases.map((a) => a.name));
  aliases.forEach((a, i) => {
    const target = a.policy.budgetDowngrade;
    if (target && !aliasNames.has(target)) reader.problem(`aliases[${i}].policy.budgetDowngrade`, `names alias '${target}', which this file does not declare${NOT_IN_FILE}`);
  });

  for (const [kind, ids] of [
    ['providers', providers.map((p) => p.id)], ['deployments', deployments.map((d) => d.id)], ['aliases', aliases.map((a) => a.name)],
    ['tenants', tenants.map((t) => t.id)], ['apiKeys', apiKeys.map((k) => k.id)], ['contentPolicies', contentPolicies.map((p) => p.id)],
  ] as const) {
    const seen = new Set<string>();
    ids.forEach((id, index) => {
      if (seen.has(id)) reader.problem(`${kind}[${index}]`, `duplicate id '${id}'`);
      seen.add(id);
    });
  }
  reader.throwIfProblems();
  return {
    providers: providers.map(({ id, type, baseUrl, apiKey, apiVersion, region, allowPrivateNetwork }) => ({ id, type, baseUrl, apiKey, apiVersion, region, allowPrivateNetwork })),
    deployments, aliases, contentPolicies, tenants, apiKeys,
  };
}

/** The file's reader: the shared definition reader, with the alias policy's members and the problems as the file reports them. */
class Reader extends DefinitionReader {
  throwIfProblems(): void {
    if (this.problems.length) throw new ConfigValidationError(this.problems.map((p) => `${p.path}: ${p.message}`), this.problems);
  }

  /** `canary: { deployment, percent, salt? }`; the deployment must be one of the alias's routes. */
  canary(node: Node, path: string, routeDeployments: ReadonlySet<string>): AliasCanary | null {
    const value = this.mapping(node, path, 'canary', 'a mapping with deployment and percent');
    if (value === null) return null;
    this.known(value, `${path}.canary`, fieldNames(CANARY_FIELDS));
    const deploymentId = this.string(value, `${path}.canary`, 'deployment');
    if (deploymentId && !routeDeployments.has(deploymentId)) this.problem(`${path}.canary.deployment`, `'${deploymentId}' is not one of this alias's routes`);
    const percent = value.percent;
    if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 100) {
      this.problem(`${path}.canary.percent`, 'must be a number from 0 to 100');
      return null;
    }
    return { deploymentId, percent, salt: this.optionalString(value, `${path}.canary`, 'salt') ?? '' };
  }

  /** An alias's `policy.limits`: per-minute rates and concurrent requests of the alias over every caller. */
  aliasLimits(node: Node, path: string): AliasRateLimits | null {
    const value = this.mapping(node, path, 'limits');
    return value === null ? null : readAliasLimitsMapping(this, value, `${path}.limits`);
  }
}

export type { AliasPolicy };
