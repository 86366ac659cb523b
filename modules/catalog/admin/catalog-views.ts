import { type AliasDefinition, type AliasPolicy, aliasStream, deploymentStream, priceAt, priceStream, providerStream, type ScheduledPrice } from '../../../events/index.js';
import type { ControlPlaneState } from '../../../projections/control-plane/index.js';
import type { ResolvedAlias, RoutingSnapshot } from '../../../projections/routing-snapshot/index.js';

/**
 * What the admin API shows of the catalog, from the node's projections. Names match the YAML; credentials
 * appear only as their references; `version` is the stream version (the ETag for If-Match).
 */
export function providerView(state: ControlPlaneState, id: string) {
  const provider = state.providers.get(id);
  if (!provider || provider.status === 'absent') return null;
  const s = provider.settings;
  return {
    id,
    status: provider.status,
    type: s.type,
    baseUrl: s.baseUrl,
    apiKey: s.credentialRef,
    apiVersion: s.apiVersion,
    region: s.region,
    allowPrivateNetwork: s.allowPrivateNetwork,
    version: state.versions.get(providerStream(id)) ?? 0,
  };
}

export function deploymentView(state: ControlPlaneState, id: string, now: Date) {
  const deployment = state.deployments.get(id);
  if (!deployment || deployment.status === 'absent') return null;
  const s = deployment.settings;
  const prices = state.prices.get(id);
  const current = prices ? priceAt(prices, now) : null;
  return {
    id,
    status: deployment.status,
    provider: s.providerId,
    model: s.model,
    region: s.region,
    capabilities: s.capabilities,
    contextWindow: s.contextWindow,
    maxOutputTokens: s.maxOutputTokens,
    quotaGroup: s.quotaGroup,
    limits: s.limits,
    price: current ? priceEntry(current, 'in-effect') : null,
    version: state.versions.get(deploymentStream(id)) ?? 0,
  };
}

/** Every price ever scheduled, in the order it was scheduled, each marked past, in effect or scheduled. */
export function priceHistoryView(state: ControlPlaneState, deploymentId: string, now: Date) {
  const schedule = state.prices.get(deploymentId)?.schedule ?? [];
  const current = priceAt({ schedule }, now);
  const history = schedule.map((entry) => {
    const status = entry === current ? 'in-effect' : entry.effectiveFrom > now ? 'scheduled' : 'past';
    return priceEntry(entry, status);
  });
  return {
    deployment: deploymentId,
    current: current ? priceEntry(current, 'in-effect') : null,
    history,
    version: state.versions.get(priceStream(deploymentId)) ?? 0,
  };
}

function priceEntry(entry: ScheduledPrice, status: 'past' | 'in-effect' | 'scheduled') {
  return { priceVersion: entry.version, effectiveFrom: entry.effectiveFrom.toISOString(), status, ...entry.table };
}

/**
 * The alias as declared (latest version) and as served: the version in the node's routing snapshot with
 * its resolved routes. They differ while a declared version cannot be served (then `problems` says why).
 */
export function aliasView(state: ControlPlaneState, snapshot: RoutingSnapshot, problems: readonly string[], name: string) {
  const alias = state.aliases.get(name);
  if (!alias || alias.status === 'absent') return null;
  const d = alias.definition;
  const serving = snapshot.aliases.get(name);
  return {
    name,
    status: alias.status,
    aliasVersion: alias.version,
    strategy: d.strategy,
    routes: d.routes.map((route) => ({ deployment: route.deploymentId, priority: route.priority, weight: route.weight })),
    policy: policyView(d.policy),
    visibility: d.visibility,
    contentPolicy: d.policy.contentPolicy ?? null,
    serving: serving ? servingView(serving) : null,
    problems: problems.filter((problem) => problem.startsWith(`alias ${name} `)),
    version: state.versions.get(aliasStream(name)) ?? 0,
  };
}

/** A definition in the view's words (what a dry-run of a publish would make the declared version). */
export function aliasDefinitionView(d: AliasDefinition, aliasVersion: number) {
  return {
    aliasVersion,
    strategy: d.strategy,
    routes: d.routes.map((route) => ({ deployment: route.deploymentId, priority: route.priority, weight: route.weight })),
    policy: policyView(d.policy),
    visibility: d.visibility,
    contentPolicy: d.policy.contentPolicy ?? null,
  };
}

/** The policy in the YAML's words (`canary.deployment`, not the event's `deploymentId`). */
function policyView(policy: AliasPolicy) {
  // The content policy is shown beside the policy, where the file and the API write it.
  const { canary, contentPolicy: _contentPolicy, ...rest } = policy;
  return { ...rest, ...(canary ? { canary: { deployment: canary.deploymentId, percent: canary.percent, salt: canary.salt } } : {}) };
}

function servingView(alias: ResolvedAlias) {
  return {
    aliasVersion: alias.version,
    routes: alias.routes.map((route) => ({
      deployment: route.deployment.id,
      provider: route.deployment.provider.id,
      providerType: route.deployment.provider.type,
      model: route.deployment.model,
      region: route.deployment.region,
      status: route.deployment.status,
      capabilities: [...route.deployment.capabilities],
      priority: route.priority,
      weight: route.weight,
    })),
  };
}
