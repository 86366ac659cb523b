import { createHash } from 'node:crypto';
import type { ProviderSettings } from '../../events/index.js';
import { resolveSecret } from '../../src/kernel/index.js';
import type { ControlPlaneState } from '../control-plane/index.js';
import { Credential } from './credential.js';
import { ContentPolicyIndex } from './content-policy-index.js';
import { type ResolvedAlias, type ResolvedDeployment, type ResolvedProvider, type RoutingSnapshot, routingSnapshot } from './routing-snapshot.js';

export interface SnapshotBuild {
  snapshot: RoutingSnapshot;
  /** One line per alias that could not be built; such an alias keeps its previous version, if any. */
  problems: string[];
  /** Deployments that cannot be called (missing provider, unresolvable secret, unsafe URL). */
  deploymentProblems: string[];
  /** Content-policy attachments that name no known policy. */
  contentPolicyProblems: readonly string[];
}

/**
 * The catalog's rule for a provider's settings (`providerSettingsProblem` in modules/catalog): why they
 * cannot serve, or null. A provider it refuses is not in the snapshot and its deployments are problems.
 * Whoever builds hands it in (the bootstrap to the projection, the publication guard to its builds),
 * because a projection imports no module (docs/architecture.md).
 */
export type ProviderSettingsRule = (settings: ProviderSettings) => string | null;

export interface BuildOptions {
  providerProblem: ProviderSettingsRule;
  /** Resolve secrets (the default, when serving; false to check structure only). */
  resolveSecrets?: boolean;
}

/**
 * Builds the next routing snapshot from the control-plane state. Validation is per alias: an alias whose
 * routes cannot be served (missing or retired deployment, missing capability, unresolvable secret) keeps
 * the version in the previous snapshot, so a bad change never takes traffic off a working alias.
 */
export function buildRoutingSnapshot(
  state: ControlPlaneState,
  version: number,
  previous: RoutingSnapshot | null,
  options: BuildOptions,
): SnapshotBuild {
  const problems: string[] = [];
  const providers = new Map<string, ResolvedProvider | string>();
  for (const [id, provider] of state.providers) {
    if (provider.status !== 'active') continue;
    const problem = options.providerProblem(provider.settings);
    if (problem) {
      providers.set(id, `provider ${id}: ${problem}`);
      continue;
    }
    let credential: Credential | null = null;
    if (provider.settings.credentialRef && options.resolveSecrets !== false) {
      try {
        credential = new Credential(resolveSecret(provider.settings.credentialRef));
      } catch (error) {
        providers.set(id, `provider ${id}: secret ${provider.settings.credentialRef} cannot be resolved (${(error as Error).message})`);
        continue;
      }
    }
    const { type, baseUrl, apiVersion, region, allowPrivateNetwork } = provider.settings;
    providers.set(id, { id, type, baseUrl, apiVersion, region, credential, allowPrivateNetwork });
  }

  const deployments = new Map<string, ResolvedDeployment | string>();
  for (const [id, deployment] of state.deployments) {
    if (deployment.status === 'absent') continue;
    if (deployment.status === 'retired') {
      deployments.set(id, `deployment ${id} is retired`);
      continue;
    }
    const provider = providers.get(deployment.settings.providerId);
    if (provider === undefined) {
      deployments.set(id, `deployment ${id}: provider ${deployment.settings.providerId} does not exist or was removed`);
      continue;
    }
    if (typeof provider === 'string') {
      deployments.set(id, `deployment ${id}: ${provider}`);
      continue;
    }
    const prices = [...(state.prices.get(id)?.schedule ?? [])].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime());
    const s = deployment.settings;
    deployments.set(id, {
      id,
      provider,
      model: s.model,
      region: s.region,
      capabilities: new Set(s.capabilities),
      contextWindow: s.contextWindow,
      maxOutputTokens: s.maxOutputTokens,
      quotaGroup: s.quotaGroup,
      limits: s.limits,
      status: deployment.status,
      prices,
      fingerprint: fingerprint(provider, id, s.model),
    });
  }

  const aliases = new Map<string, ResolvedAlias>();
  for (const [name, alias] of state.aliases) {
    if (alias.status !== 'published') continue;
    const aliasProblems: string[] = [];
    const routes = [];
    for (const route of alias.definition.routes) {
      const deployment = deployments.get(route.deploymentId);
      if (deployment === undefined) {
        aliasProblems.push(`route to deployment ${route.deploymentId}, which does not exist`);
        continue;
      }
      if (typeof deployment === 'string') {
        aliasProblems.push(deployment);
        continue;
      }
      const missing = alias.definition.policy.requiredCapabilities.filter((c) => !deployment.capabilities.has(c));
      if (missing.length) aliasProblems.push(`deployment ${deployment.id} lacks ${missing.join(', ')}, which the alias requires`);
      if (!deployment.prices.length) aliasProblems.push(`deployment ${deployment.id} has no price`);
      routes.push({ deployment, priority: route.priority, weight: route.weight });
    }
    if (aliasProblems.length) {
      problems.push(`alias ${name} v${alias.version}: ${aliasProblems.join('; ')}`);
      const kept = previous?.aliases.get(name);
      if (kept) aliases.set(name, kept);
      continue;
    }
    const { strategy, policy, visibility } = alias.definition;
    aliases.set(name, { name, version: alias.version, strategy, policy, visibility, routes });
  }

  const usable = new Map<string, ResolvedDeployment>();
  const deploymentProblems: string[] = [];
  for (const [id, deployment] of deployments) {
    if (typeof deployment !== 'string') usable.set(id, deployment);
    else if (state.deployments.get(id)?.status !== 'retired') deploymentProblems.push(deployment);
  }
  const policies = ContentPolicyIndex.of(state);
  return { snapshot: routingSnapshot(version, aliases, usable, policies), problems, deploymentProblems, contentPolicyProblems: policies.problems };
}

function fingerprint(provider: ResolvedProvider, deploymentId: string, model: string): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([provider.id, provider.type, provider.baseUrl, provider.apiVersion, provider.region, provider.allowPrivateNetwork, deploymentId, model]));
  hash.update(provider.credential?.reveal() ?? '');
  return hash.digest('hex').slice(0, 16);
}
