import type { DomainEvent } from '../../events/event.js';
import { apiKeyDecider } from '../../modules/access/api-key/api-key.decider.js';
import { contentPolicyDecider } from '../../modules/access/content-policy/content-policy.decider.js';
import { tenantDecider } from '../../modules/access/tenant/tenant.decider.js';
import { aliasDecider } from '../../modules/catalog/alias/alias.decider.js';
import { deploymentDecider } from '../../modules/catalog/deployment/deployment.decider.js';
import { priceDecider } from '../../modules/catalog/price/price.decider.js';
import { providerDecider } from '../../modules/catalog/provider/provider.decider.js';
import type { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import type { CommandContext } from '../../src/kernel/commands/decider.js';
import type { PlannedStep } from '../../src/config/apply/apply-plan.js';

/** A planned command decided by its aggregate, as the command handlers would: its stream and the new events. */
export function decidePlannedStep(state: ControlPlaneState, step: PlannedStep, context: CommandContext): [string, DomainEvent[]] {
  switch (step.family) {
    case 'provider':
      return [`provider-${step.command.providerId}`, providerDecider.decide(step.command, state.providers.get(step.command.providerId) ?? providerDecider.initialState(), context)];
    case 'deployment':
      return [`deployment-${step.command.deploymentId}`, deploymentDecider.decide(step.command, state.deployments.get(step.command.deploymentId) ?? deploymentDecider.initialState(), context)];
    case 'price':
      return [`price-${step.command.deploymentId}`, priceDecider.decide(step.command, state.prices.get(step.command.deploymentId) ?? priceDecider.initialState(), context)];
    case 'alias':
      return [`alias-${step.command.alias}`, aliasDecider.decide(step.command, state.aliases.get(step.command.alias) ?? aliasDecider.initialState(), context)];
    case 'tenant':
      return [`tenant-${step.command.tenantId}`, tenantDecider.decide(step.command, state.tenants.get(step.command.tenantId) ?? tenantDecider.initialState(), context)];
    case 'apikey':
      return [`apikey-${step.command.keyId}`, apiKeyDecider.decide(step.command, state.keys.get(step.command.keyId) ?? apiKeyDecider.initialState(), context)];
    case 'content-policy':
      return [
        `content-policy-${step.command.policyId}`,
        contentPolicyDecider.decide(step.command, state.contentPolicies.get(step.command.policyId) ?? contentPolicyDecider.initialState(), context),
      ];
  }
}
