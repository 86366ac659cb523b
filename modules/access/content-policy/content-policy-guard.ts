import { type DomainEvent, isSwitchyardEvent } from '../../../events/index.js';
import type { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { DomainError, type SettingsEnv } from '../../../src/kernel/index.js';
import { MODERATION_PROVIDER_TYPES } from '../../content-safety/index.js';
import { contentPolicySetupProblem, contentPolicyWebhookProblem } from './content-policy-settings.js';

/**
 * The content-policy rules that need other aggregates, checked before a change is appended (the
 * publication guard calls it for every command, whoever sends it: admin API, CLI, apply):
 * - an attachment (tenant, key, alias) must name a live policy: 400 naming it;
 * - a policy still attached somewhere is not retired: 409 naming every attachment;
 * - an alias a live policy's moderation check goes through is not retired: 409 naming the policies;
 * - a policy with `tokenScope: session` needs SWITCHYARD_PII_KEY on this node: 422 saying so;
 * - a policy whose webhook signs its calls needs its `secret` to resolve on this node: 422 saying so.
 * A policy's moderation alias is checked where the policy is written (the admin API: moderationAliasProblem; apply:
 * against the file and the running catalog), not here: apply defines policies before the aliases of the same file.
 */
export function assertContentPolicyChange(state: ControlPlaneState, events: readonly DomainEvent[], env: SettingsEnv): void {
  for (const event of events) {
    if (!isSwitchyardEvent(event)) continue;
    switch (event.type) {
      case 'TenantContentPolicySet':
        requireLive(state, event.data.policyId, `tenant ${event.data.tenantId}`);
        break;
      case 'ApiKeyIssued':
      case 'ApiKeyUpdated':
        requireLive(state, event.data.contentPolicy ?? null, `key ${event.data.keyId}`);
        break;
      case 'AliasPublished':
        requireLive(state, event.data.policy.contentPolicy ?? null, `alias ${event.data.alias}`);
        break;
      case 'AliasRetired': {
        const moderating = moderatedBy(state, event.data.alias);
        if (moderating.length) {
          throw new DomainError(
            'moderation_alias_in_use',
            `Alias ${event.data.alias} answers the moderation check of content policy ${moderating.join(', ')}; change or retire ${moderating.length > 1 ? 'those policies' : 'that policy'} first. Nothing was changed.`,
            409,
          );
        }
        break;
      }
      case 'ContentPolicyRetired': {
        const attached = contentPolicyAttachments(state, event.data.policyId);
        if (attached.length) {
          throw new DomainError(
            'content_policy_attached',
            `Content policy ${event.data.policyId} is attached to ${attached.join(', ')}; detach it from each first (contentPolicy), then retire it. Nothing was changed.`,
            409,
          );
        }
        break;
      }
      case 'ContentPolicyDefined':
      case 'ContentPolicyUpdated': {
        const problem = contentPolicySetupProblem(event.data.definition, env);
        if (problem) throw new DomainError('content_policy_needs_pii_key', `Content policy ${event.data.policyId}: ${problem}. Nothing was changed.`, 422);
        const webhookProblem = contentPolicyWebhookProblem(event.data.definition);
        if (webhookProblem) throw new DomainError('invalid_content_policy', `Content policy ${event.data.policyId}: ${webhookProblem}. Nothing was changed.`, 422);
        break;
      }
      default:
        break;
    }
  }
}

/** Where a policy is attached: `tenant acme`, `key k1`, `alias chat` (suspended tenants included: they may be reinstated). */
export function contentPolicyAttachments(state: ControlPlaneState, policyId: string): string[] {
  return [
    ...[...state.tenants].filter(([, t]) => t.status !== 'absent' && t.contentPolicy === policyId).map(([id]) => `tenant ${id}`),
    ...[...state.keys].filter(([, k]) => k.status === 'active' && k.grant.contentPolicy === policyId).map(([id]) => `key ${id}`),
    ...[...state.aliases].filter(([, a]) => a.status === 'published' && a.definition.policy.contentPolicy === policyId).map(([id]) => `alias ${id}`),
  ];
}

function requireLive(state: ControlPlaneState, policyId: string | null, owner: string): void {
  if (policyId === null) return;
  const status = state.contentPolicies.get(policyId)?.status ?? 'absent';
  if (status === 'live') return;
  const why = status === 'retired' ? 'is retired' : 'does not exist';
  throw new DomainError('unknown_content_policy', `${owner}: content policy ${policyId} ${why}; define it first or correct the name. Nothing was changed.`, 400);
}

/** The live policies whose moderation check goes through `alias`. */
function moderatedBy(state: ControlPlaneState, alias: string): string[] {
  return [...state.contentPolicies].filter(([, policy]) => policy.status === 'live' && policy.definition.moderation?.alias === alias).map(([id]) => id);
}

/** The admin API's check of a policy's moderation alias against the running catalog: 422 naming `moderation.alias`. */
export function assertModerationAlias(state: ControlPlaneState, policyId: string, definition: { moderation?: { alias: string } }): void {
  const problem = definition.moderation ? moderationAliasProblem(state, definition.moderation.alias) : null;
  if (problem) throw new DomainError('invalid_content_policy', `Content policy ${policyId}: moderation.alias: ${problem}. Nothing was changed.`, 422);
}

/**
 * Why `alias` cannot answer a moderation check, or null: it must be published, and at least one of its routes must
 * reach an active deployment that declares `moderation`, on an active provider whose type speaks OpenAI's moderations.
 */
export function moderationAliasProblem(state: ControlPlaneState, alias: string): string | null {
  const published = state.aliases.get(alias);
  if (!published || published.status !== 'published') return `alias ${alias} does not exist; define it (with a route to a moderation deployment) first`;
  const serves = published.definition.routes.some((route) => {
    const deployment = state.deployments.get(route.deploymentId);
    if (!deployment || deployment.status !== 'active' || !deployment.settings.capabilities.includes('moderation')) return false;
    const provider = state.providers.get(deployment.settings.providerId);
    return provider?.status === 'active' && MODERATION_PROVIDER_TYPES.includes(provider.settings.type);
  });
  return serves ? null : `alias ${alias} has no route to a deployment with the \`moderation\` capability on a provider of type ${MODERATION_PROVIDER_TYPES.join(', ')}`;
}
