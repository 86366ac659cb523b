import { Decimal } from 'decimal.js';
import type { AliasDefinition } from '../../../events/alias-state.js';
import type { ApiKeyCommand } from '../../../modules/access/api-key/api-key.decider.js';
import { displayPrefix, hashApiKey } from '../../../modules/access/api-key/key-format.js';
import type { TenantCommand } from '../../../modules/access/tenant/tenant.decider.js';
import type { DeploymentCommand } from '../../../modules/catalog/deployment/deployment.decider.js';
import type { PriceCommand } from '../../../modules/catalog/price/price.decider.js';
import { type ProviderCommand, providerSettingsProblem } from '../../../modules/catalog/provider/provider.decider.js';
import type { AliasCommand } from '../../../modules/catalog/alias/alias.decider.js';
import type { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { sameJson } from '../../kernel/canonical-json.js';
import { resolveSecret } from '../../kernel/secret-references/secret-reference.js';
import type { GatewayConfig } from '../gateway-config.js';

export type PlannedStep =
  | { family: 'provider'; command: ProviderCommand; summary: string; path: string }
  | { family: 'deployment'; command: DeploymentCommand; summary: string; path: string }
  | { family: 'price'; command: PriceCommand; summary: string; path: string }
  | { family: 'alias'; command: AliasCommand; summary: string; path: string }
  | { family: 'tenant'; command: TenantCommand; summary: string; path: string }
  | { family: 'apikey'; command: ApiKeyCommand; summary: string; path: string };

export interface ApplyPlan {
  steps: PlannedStep[];
  /** Differences that no command can reconcile; the plan is refused while there are any. */
  problems: string[];
  /**
   * Lifecycle the running system changed and the file does not match (a key revoked, a tenant
   * suspended, a deployment disabled at runtime). Runtime wins: apply leaves these as they are and says so.
   */
  drift: string[];
}

/**
 * Lifecycle states that earlier applies of a configuration caused (their events' actor is `config:…`),
 * which the file may therefore undo; any other suspension or disablement came from an operator at runtime.
 */
export interface ConfigurationOwned {
  disabledDeployments: ReadonlySet<string>;
  suspendedTenants: ReadonlySet<string>;
}

export interface PlanOptions {
  now: Date;
  /** Retire, remove, revoke or suspend what the file no longer declares. */
  prune: boolean;
  configurationOwned?: ConfigurationOwned;
}

const NOTHING_OWNED: ConfigurationOwned = { disabledDeployments: new Set(), suspendedTenants: new Set() };

/**
 * The diff of a configuration file against the projections: only the commands whose events would
 * change something. Order respects references: providers, deployments, prices, tenants, aliases, keys;
 * pruning runs the other way round. For lifecycle the running system wins: the file never revives a
 * revoked key, reinstates a tenant or enables a deployment that was stopped at runtime; it reports the
 * drift instead (it may still stop things itself: `disabled: true`, `--prune`).
 */
export function planApply(config: GatewayConfig, state: ControlPlaneState, options: PlanOptions): ApplyPlan {
  const steps: PlannedStep[] = [];
  const problems: string[] = [];
  const drift: string[] = [];
  const owned = options.configurationOwned ?? NOTHING_OWNED;

  config.providers.forEach((p, i) => {
    const path = `providers[${i}]`;
    const settings = { type: p.type, baseUrl: p.baseUrl, credentialRef: p.apiKey, apiVersion: p.apiVersion, region: p.region, allowPrivateNetwork: p.allowPrivateNetwork };
    const current = state.providers.get(p.id);
    if (current?.status === 'removed') {
      problems.push(`${path}: provider ${p.id} was removed; choose a new id`);
      return;
    }
    const exists = current !== undefined && current.status === 'active';
    if (exists && sameJson(current.settings, settings)) return;
    // A change is checked here as its aggregate and safe publication will check it, so a dry run reports
    // an unsafe base URL or an unreadable reference, and a real run appends nothing before refusing.
    const problem = providerSettingsProblem(settings) ?? secretProblem(p.apiKey);
    if (problem) {
      problems.push(`${path}: ${problem}`);
      return;
    }
    const command: ProviderCommand = exists
      ? { type: 'UpdateProvider', providerId: p.id, settings }
      : { type: 'RegisterProvider', providerId: p.id, settings };
    steps.push({ family: 'provider', path, summary: `${exists ? 'update' : 'register'} provider ${p.id}`, command });
  });

  config.deployments.forEach((d, i) => {
    const path = `deployments[${i}]`;
    const settings = {
      providerId: d.provider, model: d.model, region: d.region, capabilities: d.capabilities, contextWindow: d.contextWindow,
      maxOutputTokens: d.maxOutputTokens, quotaGroup: d.quotaGroup, limits: d.limits,
    };
    const current = state.deployments.get(d.id);
    if (!current || current.status === 'absent') {
      steps.push({ family: 'deployment', path, summary: `register deployment ${d.id}`, command: { type: 'RegisterDeployment', deploymentId: d.id, settings } });
    } else if (current.status === 'retired') {
      problems.push(`${path}: deployment ${d.id} is retired; choose a new id`);
      return;
    } else if (!sameJson({ ...current.settings, capabilities: [...current.settings.capabilities].sort() }, { ...settings, capabilities: [...settings.capabilities].sort() })) {
      steps.push({ family: 'deployment', path, summary: `update deployment ${d.id}`, command: { type: 'UpdateDeployment', deploymentId: d.id, settings } });
    }
    const status = current && current.status !== 'absent' ? current.status : 'active';
    if (d.disabled === true && status === 'active') {
      steps.push({ family: 'deployment', path: `${path}.disabled`, summary: `disable deployment ${d.id}`, command: { type: 'DisableDeployment', deploymentId: d.id, reason: 'configuration' } });
    } else if (d.disabled !== true && status === 'disabled') {
      if (owned.disabledDeployments.has(d.id)) {
        steps.push({ family: 'deployment', path: `${path}.disabled`, summary: `enable deployment ${d.id}`, command: { type: 'EnableDeployment', deploymentId: d.id } });
      } else {
        drift.push(`${path}: deployment ${d.id} was disabled at runtime and stays disabled (enable it with POST /admin/v1/deployments/${d.id}/enable)`);
      }
    }
    const { effectiveFrom, ...table } = d.price;
    const schedule = state.prices.get(d.id)?.schedule ?? [];
    const latest = [...schedule].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime()).at(-1);
    const wanted = effectiveFrom ? new Date(effectiveFrom) : null;
    const already = wanted ? schedule.find((s) => s.effectiveFrom.getTime() === wanted.getTime()) : latest;
    if (!already || !samePrice({ ...already.table }, { ...table })) {
      steps.push({
        family: 'price', path: `${path}.price`, summary: `schedule price for ${d.id}${wanted ? ` from ${wanted.toISOString()}` : ''}`,
        command: { type: 'SchedulePrice', deploymentId: d.id, effectiveFrom: wanted ?? options.now, table },
      });
    }
  });

  config.tenants.forEach((t, i) => {
    const path = `tenants[${i}]`;
    const current = state.tenants.get(t.id);
    const exists = current && current.status !== 'absent';
    if (!exists) steps.push({ family: 'tenant', path, summary: `create tenant ${t.id}`, command: { type: 'CreateTenant', tenantId: t.id, name: t.name } });
    if (exists && current.status === 'suspended') {
      if (owned.suspendedTenants.has(t.id)) {
        steps.push({ family: 'tenant', path, summary: `reinstate tenant ${t.id} (suspended by an earlier apply --prune)`, command: { type: 'ReinstateTenant', tenantId: t.id } });
      } else {
        drift.push(`${path}: tenant ${t.id} was suspended at runtime and stays suspended (reinstate it with POST /admin/v1/tenants/${t.id}/reinstate)`);
      }
    }
    const hookProblem = t.budget?.webhook ? secretProblem(t.budget.webhook.secret) : null;
    if (hookProblem) problems.push(`${path}.budget.webhook.secret: ${hookProblem.replace(/^apiKey /, '')}`);
    const limits = exists ? current.limits : { rpm: null, tpm: null, maxConcurrency: null };
    if (!sameJson(limits, t.limits)) {
      steps.push({ family: 'tenant', path: `${path}.limits`, summary: `set limits of tenant ${t.id}`, command: { type: 'SetTenantLimits', tenantId: t.id, limits: t.limits } });
    }
    if (!sameJson(exists ? current.budget : null, t.budget)) {
      steps.push({ family: 'tenant', path: `${path}.budget`, summary: `set budget of tenant ${t.id}`, command: { type: 'SetTenantBudget', tenantId: t.id, budget: t.budget } });
    }
  });

  config.aliases.forEach((a, i) => {
    const path = `aliases[${i}]`;
    const definition: AliasDefinition = {
      strategy: a.strategy,
      routes: a.routes.map((r) => ({ deploymentId: r.deployment, priority: r.priority, weight: r.weight })),
      policy: a.policy,
      visibility: a.visibility,
    };
    const current = state.aliases.get(a.name);
    if (!current || current.status !== 'published' || !sameJson(current.definition, definition)) {
      steps.push({ family: 'alias', path, summary: `publish alias ${a.name}`, command: { type: 'PublishAlias', alias: a.name, definition } });
    }
  });

  const callable = new Set([
    ...config.aliases.map((a) => a.name),
    ...[...state.aliases].filter(([, alias]) => alias.status === 'published').map(([name]) => name),
  ]);
  config.apiKeys.forEach((k, i) => {
    const path = `apiKeys[${i}]`;
    const current = state.keys.get(k.id);
    const unknown = k.aliases.filter((alias) => !callable.has(alias));
    if (unknown.length) {
      problems.push(`${path}.aliases: ${unknown.map((a) => `'${a}'`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a published or declared alias`);
      return;
    }
    if (current && current.status !== 'absent' && current.status !== 'active') {
      // A revoked or expired key never comes back; refusing to start over it would let one revocation stop the gateway.
      drift.push(`${path}: key ${k.id} is ${current.status} and stays so; to replace it, issue a new key id`);
      return;
    }
    let plaintext: string;
    try {
      plaintext = resolveSecret(k.key);
    } catch (error) {
      problems.push(`${path}.key: ${k.key} cannot be resolved: ${(error as Error).message}`);
      return;
    }
    if (!/^sk-sy-[0-9A-Za-z]{32}$/.test(plaintext)) {
      problems.push(`${path}.key: the key behind ${k.key} must look like sk-sy- followed by 32 letters and digits`);
      return;
    }
    const hookProblem = k.budget?.webhook ? secretProblem(k.budget.webhook.secret) : null;
    if (hookProblem) problems.push(`${path}.budget.webhook.secret: ${hookProblem.replace(/^apiKey /, '')}`);
    const hash = hashApiKey(plaintext);
    const grant = { tenantId: k.tenant, scopes: k.scopes, aliases: k.aliases, limits: k.limits, expiresAt: k.expiresAt, ...(k.budget ? { budget: k.budget } : {}) };
    if (!current || current.status === 'absent') {
      steps.push({ family: 'apikey', path, summary: `issue key ${k.id}`, command: { type: 'IssueApiKey', keyId: k.id, hash, prefix: displayPrefix(plaintext), grant } });
    } else if (current.hash !== hash) {
      problems.push(`${path}.key: key ${k.id} has a different secret; a secret changes only by an explicit rotation (switchyard keys rotate ${k.id})`);
    } else if (current.grant.tenantId !== k.tenant) {
      problems.push(`${path}.tenant: key ${k.id} belongs to tenant ${current.grant.tenantId}; a key never moves to another tenant`);
    } else if (!sameJson(current.grant, grant)) {
      steps.push({ family: 'apikey', path, summary: `update key ${k.id} (${changedMembers(current.grant, grant).join(', ')})`, command: { type: 'UpdateApiKey', keyId: k.id, grant } });
    }
  });

  if (options.prune) steps.push(...pruneSteps(config, state));
  return { steps, problems, drift };
}

function pruneSteps(config: GatewayConfig, state: ControlPlaneState): PlannedStep[] {
  const steps: PlannedStep[] = [];
  const declared = {
    keys: new Set(config.apiKeys.map((k) => k.id)),
    aliases: new Set(config.aliases.map((a) => a.name)),
    deployments: new Set(config.deployments.map((d) => d.id)),
    providers: new Set(config.providers.map((p) => p.id)),
    tenants: new Set(config.tenants.map((t) => t.id)),
  };
  for (const [id, key] of state.keys) {
    if (key.status === 'active' && !declared.keys.has(id)) {
      steps.push({ family: 'apikey', path: 'apiKeys', summary: `revoke key ${id} (not declared)`, command: { type: 'RevokeApiKey', keyId: id, reason: 'pruned by apply' } });
    }
  }
  for (const [name, alias] of state.aliases) {
    if (alias.status === 'published' && !declared.aliases.has(name)) {
      steps.push({ family: 'alias', path: 'aliases', summary: `retire alias ${name} (not declared)`, command: { type: 'RetireAlias', alias: name, reason: 'pruned by apply' } });
    }
  }
  for (const [id, deployment] of state.deployments) {
    if ((deployment.status === 'active' || deployment.status === 'disabled') && !declared.deployments.has(id)) {
      steps.push({ family: 'deployment', path: 'deployments', summary: `retire deployment ${id} (not declared)`, command: { type: 'RetireDeployment', deploymentId: id, reason: 'pruned by apply' } });
    }
  }
  for (const [id, provider] of state.providers) {
    if (provider.status === 'active' && !declared.providers.has(id)) {
      steps.push({ family: 'provider', path: 'providers', summary: `remove provider ${id} (not declared)`, command: { type: 'RemoveProvider', providerId: id, reason: 'pruned by apply' } });
    }
  }
  for (const [id, tenant] of state.tenants) {
    if (tenant.status === 'active' && !declared.tenants.has(id)) {
      steps.push({ family: 'tenant', path: 'tenants', summary: `suspend tenant ${id} (not declared)`, command: { type: 'SuspendTenant', tenantId: id, reason: 'pruned by apply' } });
    }
  }
  return steps;
}

function changedMembers(before: object, after: object): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  return Object.keys({ ...a, ...b }).filter((name) => !sameJson(a[name] ?? null, b[name] ?? null));
}

function secretProblem(ref: string | null): string | null {
  if (!ref) return null;
  try {
    resolveSecret(ref);
    return null;
  } catch (error) {
    return `apiKey ${ref} cannot be resolved: ${(error as Error).message}`;
  }
}

function samePrice(a: Record<string, string | null>, b: Record<string, string | null>): boolean {
  return Object.keys({ ...a, ...b }).every((key) => {
    const x = a[key] ?? null;
    const y = b[key] ?? null;
    if (x === null || y === null) return x === y;
    return /^\d/.test(x) && /^\d/.test(y) ? new Decimal(x).eq(y) : x === y;
  });
}
