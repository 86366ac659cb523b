import { parse } from 'yaml';
import { ROUTING_STRATEGIES, type AliasCanary, type AliasPolicy, type AliasRateLimits, type RoutingStrategy } from '../../events/alias-events.js';
import { CAPABILITIES, type Capability, type DeploymentLimits } from '../../events/deployment-events.js';
import { KEY_SCOPES, type KeyScope } from '../../events/api-key-events.js';
import type { PriceTable } from '../../events/price-events.js';
import { PROVIDER_TYPES, type ProviderType } from '../../events/provider-events.js';
import type { BudgetWebhook, TenantBudget, TenantLimits } from '../../events/tenant-events.js';
import { BUDGET_DEFAULTS, DEFAULT_KEY_SCOPES } from '../../modules/access/index.js';
import { ALIAS_DEFAULTS } from '../../modules/catalog/index.js';
import {
  ALIAS_FIELDS, ALIAS_LIMITS_FIELDS, API_KEY_FIELDS, BUDGET_FIELDS, CANARY_FIELDS, DEPLOYMENT_DEFAULTS, DEPLOYMENT_FIELDS, GATEWAY_CONFIG_FIELDS, LIMITS_FIELDS,
  POLICY_FIELDS, PRICE_FIELDS, PROVIDER_FIELDS, ROUTE_FIELDS, TENANT_FIELDS, WEBHOOK_FIELDS, fieldNames,
} from './gateway-config-schema.js';

/**
 * The declarative configuration (DESIGN §8), validated, with every reference checked. Which fields each
 * mapping accepts, and the defaults of its fields, come from the schema (gateway-config-schema.ts).
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
  tenants: Array<{ id: string; name: string; limits: TenantLimits; budget: TenantBudget | null }>;
  apiKeys: Array<{
    id: string; tenant: string; key: string; aliases: string[]; scopes: KeyScope[]; limits: TenantLimits; expiresAt: string | null; budget: TenantBudget | null;
  }>;
}

/** Every problem found, each naming its YAML path, so one run shows them all. */
export class ConfigValidationError extends Error {
  override readonly name = 'ConfigValidationError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Node = Record<string, unknown>;

export function parseGatewayConfig(text: string, source = 'config'): GatewayConfig {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new ConfigValidationError([`${source}: not valid YAML (${(error as Error).message.split('\n')[0]})`]);
  }
  const reader = new Reader();
  const root = raw === null || raw === undefined ? {} : raw;
  if (!isNode(root)) throw new ConfigValidationError([`${source}: the top level must be a mapping`]);
  reader.known(root, '', fieldNames(GATEWAY_CONFIG_FIELDS));

  const providers = reader.list(root, 'providers').map(([node, path]) => ({
    id: reader.id(node, path),
    type: reader.oneOf(node, `${path}.type`, 'type', PROVIDER_TYPES, null) as ProviderType,
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
    if (provider && !providerIds.has(provider)) reader.problem(`${path}.provider`, `names provider '${provider}', which is not declared`);
    const capabilities = reader.stringList(node, path, 'capabilities') ?? [...DEPLOYMENT_DEFAULTS.capabilities];
    for (const [i, c] of capabilities.entries()) {
      if (!(CAPABILITIES as readonly string[]).includes(c)) reader.problem(`${path}.capabilities[${i}]`, `unknown capability '${c}' (known: ${CAPABILITIES.join(', ')})`);
    }
    const priceNode = node.price;
    if (!isNode(priceNode)) reader.problem(`${path}.price`, 'is required (inputPer1M and outputPer1M at least)');
    const price = isNode(priceNode) ? priceNode : {};
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
      limits: reader.limits(node, path),
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
      if (deployment && !deploymentIds.has(deployment)) reader.problem(`${routePath}.deployment`, `names deployment '${deployment}', which is not declared`);
      return { deployment, priority: reader.integer(route, routePath, 'priority', ALIAS_DEFAULTS.routePriority), weight: reader.number(route, routePath, 'weight', ALIAS_DEFAULTS.routeWeight) };
    });
    if (routes.length === 0) reader.problem(`${path}.routes`, 'needs at least one route');
    const policyNode = isNode(node.policy) ? node.policy : {};
    reader.known(policyNode, `${path}.policy`, fieldNames(POLICY_FIELDS));
    const budgetDowngrade = reader.optionalString(policyNode, `${path}.policy`, 'budgetDowngrade');
    const canary = reader.canary(policyNode, `${path}.policy`, new Set(routes.map((r) => r.deployment)));
    const aliasLimits = reader.aliasLimits(policyNode, `${path}.policy`);
    return {
      name: reader.string(node, path, 'name'),
      strategy: reader.oneOf(node, `${path}.strategy`, 'strategy', ROUTING_STRATEGIES, ALIAS_DEFAULTS.strategy) as RoutingStrategy,
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
      },
      visibility: reader.oneOf(node, `${path}.visibility`, 'visibility', ['public', 'private'] as const, ALIAS_DEFAULTS.visibility) as 'public' | 'private',
    };
  });

  const tenants = reader.list(root, 'tenants').map(([node, path]) => {
    reader.known(node, path, fieldNames(TENANT_FIELDS));
    const id = reader.id(node, path);
    const budget = reader.budget(node, path);
    return { id, name: reader.optionalString(node, path, 'name') ?? id, limits: reader.limits(node, path), budget };
  });
  const tenantIds = new Set(tenants.map((t) => t.id));

  const apiKeys = reader.list(root, 'apiKeys').map(([node, path]) => {
    reader.known(node, path, fieldNames(API_KEY_FIELDS));
    const tenant = reader.string(node, path, 'tenant');
    if (tenant && !tenantIds.has(tenant)) reader.problem(`${path}.tenant`, `names tenant '${tenant}', which is not declared`);
    const key = reader.string(node, path, 'key');
    // sha256:<hex> is the stored hash of a key whose plaintext is not at hand (what `config export` writes).
    if (key && !/^(env|file):.+/.test(key) && !/^sha256:[0-9a-f]{64}$/.test(key)) {
      reader.problem(`${path}.key`, 'must be a secret reference (env:NAME or file:PATH) or the stored hash (sha256: and 64 hex digits), never the key itself');
    }
    const scopes = reader.stringList(node, path, 'scopes') ?? [...DEFAULT_KEY_SCOPES];
    for (const [i, s] of scopes.entries()) {
      if (!(KEY_SCOPES as readonly string[]).includes(s)) reader.problem(`${path}.scopes[${i}]`, `unknown scope '${s}' (known: ${KEY_SCOPES.join(', ')})`);
    }
    return {
      id: reader.id(node, path),
      tenant,
      key,
      aliases: reader.stringList(node, path, 'aliases') ?? [],
      scopes: scopes as KeyScope[],
      limits: reader.limits(node, path),
      expiresAt: reader.timestamp(node, path, 'expiresAt'),
      budget: reader.budget(node, path),
    };
  });

  const aliasNames = new Set(aliases.map((a) => a.name));
  aliases.forEach((a, i) => {
    const target = a.policy.budgetDowngrade;
    if (target && !aliasNames.has(target)) reader.problem(`aliases[${i}].policy.budgetDowngrade`, `names alias '${target}', which is not declared`);
  });

  for (const [kind, ids] of [
    ['providers', providers.map((p) => p.id)], ['deployments', deployments.map((d) => d.id)], ['aliases', aliases.map((a) => a.name)],
    ['tenants', tenants.map((t) => t.id)], ['apiKeys', apiKeys.map((k) => k.id)],
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
    deployments, aliases, tenants, apiKeys,
  };
}

class Reader {
  private readonly problems: string[] = [];

  problem(path: string, message: string): void {
    this.problems.push(`${path.replace(/^\./, '')}: ${message}`);
  }

  throwIfProblems(): void {
    if (this.problems.length) throw new ConfigValidationError(this.problems);
  }

  /** Flags keys the schema does not know: a typo must not silently do nothing. */
  known(node: Node, path: string, keys: string[]): Record<string, never> {
    for (const key of Object.keys(node)) if (!keys.includes(key)) this.problem(`${path}.${key}`, `unknown field (expected one of ${keys.join(', ')})`);
    return {};
  }

  list(node: Node, key: string, parent = ''): Array<[Node, string]> {
    const value = node[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.problem(`${parent}.${key}`, 'must be a list');
      return [];
    }
    return value.flatMap((item, index): Array<[Node, string]> => {
      const path = `${parent}.${key}[${index}]`.replace(/^\./, '');
      if (!isNode(item)) {
        this.problem(path, 'must be a mapping');
        return [];
      }
      return [[item, path]];
    });
  }

  id(node: Node, path: string): string {
    const value = this.string(node, path, 'id');
    if (value && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) this.problem(`${path}.id`, 'use letters, digits, ".", "_" and "-" (at most 64)');
    return value;
  }

  string(node: Node, path: string, key: string): string {
    const value = node[key];
    if (typeof value !== 'string' || value.length === 0) {
      this.problem(`${path}.${key}`, 'is required and must be a string');
      return '';
    }
    return value;
  }

  optionalString(node: Node, path: string, key: string): string | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') {
      this.problem(`${path}.${key}`, 'must be a string');
      return null;
    }
    return value;
  }

  optionalBoolean(node: Node, path: string, key: string): boolean | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'boolean') {
      this.problem(`${path}.${key}`, 'must be true or false');
      return null;
    }
    return value;
  }

  integer(node: Node, path: string, key: string, fallback: number): number {
    return this.optionalInteger(node, path, key) ?? fallback;
  }

  optionalInteger(node: Node, path: string, key: string): number | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      this.problem(`${path}.${key}`, 'must be a non-negative integer');
      return null;
    }
    return value;
  }

  number(node: Node, path: string, key: string, fallback: number): number {
    const value = node[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.problem(`${path}.${key}`, 'must be a non-negative number');
      return fallback;
    }
    return value;
  }

  /** Decimal amounts: quoted strings preferred; plain YAML numbers are taken by their shortest decimal form. */
  decimal(node: Node, path: string, key: string, required: boolean): string | null {
    const value = node[key];
    if (value === undefined || value === null) {
      if (required) this.problem(`${path}.${key}`, 'is required (a decimal such as "0.15")');
      return null;
    }
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string' || !/^\d+(\.\d+)?$/.test(text)) {
      this.problem(`${path}.${key}`, 'must be a non-negative decimal such as "0.15"');
      return null;
    }
    return text;
  }

  timestamp(node: Node, path: string, key: string): string | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
    if (!date || Number.isNaN(date.getTime())) {
      this.problem(`${path}.${key}`, 'must be an ISO-8601 timestamp');
      return null;
    }
    return date.toISOString();
  }

  stringList(node: Node, path: string, key: string): string[] | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      this.problem(`${path}.${key}`, 'must be a list of strings');
      return null;
    }
    return value as string[];
  }

  oneOf<T extends string>(node: Node, path: string, key: string, allowed: readonly T[], fallback: T | null): T {
    const value = node[key];
    if ((value === undefined || value === null) && fallback !== null) return fallback;
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      this.problem(path, `must be one of ${allowed.join(', ')}`);
      return (fallback ?? allowed[0]) as T;
    }
    return value as T;
  }

  /** `canary: { deployment, percent, salt? }`; the deployment must be one of the alias's routes. */
  canary(node: Node, path: string, routeDeployments: ReadonlySet<string>): AliasCanary | null {
    const value = node.canary;
    if (value === undefined || value === null) return null;
    if (!isNode(value)) {
      this.problem(`${path}.canary`, 'must be a mapping with deployment and percent');
      return null;
    }
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

  limits(node: Node, path: string): TenantLimits {
    const value = node.limits;
    if (value === undefined || value === null) return { rpm: null, tpm: null, maxConcurrency: null };
    if (!isNode(value)) {
      this.problem(`${path}.limits`, 'must be a mapping');
      return { rpm: null, tpm: null, maxConcurrency: null };
    }
    this.known(value, `${path}.limits`, fieldNames(LIMITS_FIELDS));
    const inputTpm = this.positiveInteger(value, `${path}.limits`, 'inputTpm');
    const outputTpm = this.positiveInteger(value, `${path}.limits`, 'outputTpm');
    return {
      rpm: this.positiveInteger(value, `${path}.limits`, 'rpm'),
      tpm: this.positiveInteger(value, `${path}.limits`, 'tpm'),
      // Left out when unset, so what was issued before these existed compares equal.
      ...(inputTpm !== null ? { inputTpm } : {}),
      ...(outputTpm !== null ? { outputTpm } : {}),
      maxConcurrency: this.positiveInteger(value, `${path}.limits`, 'maxConcurrency'),
    };
  }

  /** `budget: { monthlyUsd?, dailyUsd?, softPct, enforcement, webhook? }` of a tenant or a key. */
  budget(node: Node, path: string): TenantBudget | null {
    const value = node.budget;
    if (value === undefined || value === null) return null;
    if (!isNode(value)) {
      this.problem(`${path}.budget`, 'must be a mapping');
      return null;
    }
    const at = `${path}.budget`;
    this.known(value, at, fieldNames(BUDGET_FIELDS));
    const monthlyUsd = this.decimal(value, at, 'monthlyUsd', false);
    const dailyUsd = this.decimal(value, at, 'dailyUsd', false);
    if (monthlyUsd === null && dailyUsd === null) this.problem(at, 'needs monthlyUsd or dailyUsd (or both)');
    for (const [name, amount] of [['monthlyUsd', monthlyUsd], ['dailyUsd', dailyUsd]] as const) {
      if (amount !== null && Number(amount) === 0) this.problem(`${at}.${name}`, 'must be above zero');
    }
    const softPct = this.integer(value, at, 'softPct', BUDGET_DEFAULTS.softPct);
    if (softPct < 1 || softPct > 100) this.problem(`${at}.softPct`, 'must be an integer from 1 to 100');
    let webhook: BudgetWebhook | null = null;
    if (value.webhook !== undefined && value.webhook !== null) {
      if (!isNode(value.webhook)) this.problem(`${at}.webhook`, 'must be a mapping with url and secret');
      else {
        this.known(value.webhook, `${at}.webhook`, fieldNames(WEBHOOK_FIELDS));
        const url = this.string(value.webhook, `${at}.webhook`, 'url');
        const secret = this.string(value.webhook, `${at}.webhook`, 'secret');
        if (url && !/^https?:\/\/[^/]+/.test(url)) this.problem(`${at}.webhook.url`, 'must be an http(s) URL');
        if (secret && !/^(env|file):.+/.test(secret)) this.problem(`${at}.webhook.secret`, 'must be a secret reference (env:NAME or file:PATH), never the secret itself');
        const allowPrivateNetwork = this.optionalBoolean(value.webhook, `${at}.webhook`, 'allowPrivateNetwork') === true;
        webhook = { url, secret, ...(allowPrivateNetwork ? { allowPrivateNetwork } : {}) };
      }
    }
    return {
      // Members that are not set are left out, so budgets set before they existed compare equal.
      ...(monthlyUsd !== null ? { monthlyUsd } : {}),
      ...(dailyUsd !== null ? { dailyUsd } : {}),
      softPct,
      enforcement: this.oneOf(value, `${at}.enforcement`, 'enforcement', ['hard', 'soft'] as const, BUDGET_DEFAULTS.enforcement) as 'hard' | 'soft',
      ...(webhook ? { webhook } : {}),
    };
  }

  /** An alias's `policy.limits`: per-minute rates and concurrent requests of the alias over every caller. */
  aliasLimits(node: Node, path: string): AliasRateLimits | null {
    const value = node.limits;
    if (value === undefined || value === null) return null;
    if (!isNode(value)) {
      this.problem(`${path}.limits`, 'must be a mapping');
      return null;
    }
    this.known(value, `${path}.limits`, fieldNames(ALIAS_LIMITS_FIELDS));
    const limits: AliasRateLimits = {};
    for (const name of fieldNames(ALIAS_LIMITS_FIELDS) as Array<keyof AliasRateLimits>) {
      const limit = this.positiveInteger(value, `${path}.limits`, name);
      if (limit !== null) limits[name] = limit;
    }
    return Object.keys(limits).length ? limits : null;
  }

  /** A limit: absent or null = unlimited; otherwise at least 1 (a limit of 0 would refuse everything silently). */
  positiveInteger(node: Node, path: string, key: string): number | null {
    const value = this.optionalInteger(node, path, key);
    if (value === 0) {
      this.problem(`${path}.${key}`, 'must be a positive integer (leave it out for no limit)');
      return null;
    }
    return value;
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

export type { AliasPolicy };
