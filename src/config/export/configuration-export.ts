import { stringify } from 'yaml';
import type { TenantBudget, TenantLimits } from '../../../events/tenant-events.js';
import type { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { parseGatewayConfig } from '../gateway-config.js';

/**
 * The running definitions as a configuration file (`switchyard config export`): what the admin API, the
 * CLI and earlier applies made, in the file's own shape, so that it can be committed and applied with no
 * change. Providers, deployments with the latest price each, published aliases, live content policies, tenants, and active
 * keys; what is retired, removed, revoked or expired is left out (the file cannot bring it back).
 * Secrets are what the log holds: provider credentials and webhook secrets as their references, keys as
 * their stored hash (`sha256:…`; the gateway never keeps a key's plaintext). Lifecycle a file cannot say
 * (a suspended tenant) stays runtime state; a disabled deployment is written `disabled: true`.
 */
export function exportConfiguration(state: ControlPlaneState, now: Date): string {
  const providers = [...state.providers.values()].flatMap((p) => (p.status !== 'active' ? [] : [compact({
    id: p.providerId, type: p.settings.type, baseUrl: p.settings.baseUrl, apiKey: p.settings.credentialRef, apiVersion: p.settings.apiVersion,
    region: p.settings.region, allowPrivateNetwork: p.settings.allowPrivateNetwork || null,
  })]));
  const deployments = [...state.deployments.values()].flatMap((d) => {
    if (d.status !== 'active' && d.status !== 'disabled') return [];
    const schedule = state.prices.get(d.deploymentId)?.schedule ?? [];
    const latest = [...schedule].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime()).at(-1);
    const s = d.settings;
    return [compact({
      id: d.deploymentId, provider: s.providerId, model: s.model, region: s.region, capabilities: s.capabilities, contextWindow: s.contextWindow,
      maxOutputTokens: s.maxOutputTokens, quotaGroup: s.quotaGroup, limits: limits(s.limits),
      // A price that starts later than now keeps its start, so that the file says the same schedule.
      price: latest ? compact({ ...latest.table, currency: null, effectiveFrom: latest.effectiveFrom > now ? latest.effectiveFrom.toISOString() : null }) : null,
      disabled: d.status === 'disabled' ? true : null,
    })];
  });
  const aliases = [...state.aliases.values()].flatMap((a) => {
    if (a.status !== 'published') return [];
    const { policy } = a.definition;
    return [compact({
      name: a.alias, strategy: a.definition.strategy,
      routes: a.definition.routes.map((r) => ({ deployment: r.deploymentId, priority: r.priority, weight: r.weight })),
      policy: compact({
        requiredCapabilities: policy.requiredCapabilities.length ? policy.requiredCapabilities : null, maxAttempts: policy.maxAttempts,
        ttftTimeoutMs: policy.ttftTimeoutMs, regions: policy.regions.length ? policy.regions : null,
        canary: policy.canary ? { deployment: policy.canary.deploymentId, percent: policy.canary.percent, salt: policy.canary.salt } : null,
        cache: policy.cache ?? null, limits: policy.limits ?? null, budgetDowngrade: policy.budgetDowngrade ?? null,
      }),
      visibility: a.definition.visibility,
      contentPolicy: policy.contentPolicy ?? null,
    })];
  });
  // Live policies as the file declares them; a policy's defaults are written out (they are part of its version).
  const contentPolicies = [...state.contentPolicies.values()].flatMap((p) => (p.status !== 'live' ? [] : [{ id: p.policyId, ...p.definition }]));
  const tenants = [...state.tenants.values()].flatMap((t) => (t.status === 'absent' ? [] : [compact({
    id: t.tenantId, name: t.name === t.tenantId ? null : t.name, limits: limits(t.limits), budget: budget(t.budget), contentPolicy: t.contentPolicy ?? null,
  })]));
  const apiKeys = [...state.keys.values()].flatMap((k) => (k.status !== 'active' ? [] : [compact({
    id: k.keyId, tenant: k.grant.tenantId, key: `sha256:${k.hash}`, aliases: k.grant.aliases, scopes: k.grant.scopes, limits: limits(k.grant.limits),
    expiresAt: k.grant.expiresAt, budget: budget(k.grant.budget ?? null), contentPolicy: k.grant.contentPolicy ?? null,
  })]));
  const document = compact({
    providers: nonEmpty(providers), deployments: nonEmpty(deployments), aliases: nonEmpty(aliases), contentPolicies: nonEmpty(contentPolicies),
    tenants: nonEmpty(tenants), apiKeys: nonEmpty(apiKeys),
  });
  const yaml = `# switchyard.yaml: exported ${now.toISOString()} from the running state (switchyard config export)\n${stringify(document, { lineWidth: 0 })}`;
  // What is written must be a file the gateway accepts: checked here rather than found out at the next start.
  parseGatewayConfig(yaml, 'the exported configuration');
  return yaml;
}

function limits(value: TenantLimits): Record<string, number> | null {
  const set = compact({ ...value });
  return Object.keys(set).length ? (set as Record<string, number>) : null;
}

function budget(value: TenantBudget | null): Record<string, unknown> | null {
  return value ? compact({ ...value, webhook: value.webhook ? compact({ ...value.webhook }) : null }) : null;
}

function nonEmpty<T>(list: T[]): T[] | null {
  return list.length ? list : null;
}

/** The mapping without its unset members (null or left out): the file's defaults say the same. */
function compact<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== null && member !== undefined)) as Partial<T>;
}
