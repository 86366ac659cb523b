import { assertContentPolicyChange } from '../modules/access/content-policy/content-policy-guard.js';
import { assertSafeCatalogChange } from '../modules/catalog/publication-guard.js';
import { splitStream } from '../projections/control-plane/index.js';
import { isSwitchyardEvent } from '../events/switchyard-event.js';
import type { TenantBudget } from '../events/tenant-events.js';
import { DomainError } from './kernel/commands/decider.js';
import { resolveSecret } from './kernel/secret-references/secret-reference.js';
import type { Platform } from './platform.js';

/**
 * Catalog and key commands are checked against the snapshot they would produce before they are appended;
 * content-policy attachments and retirements against the policies and attachments in force;
 * a budget's webhook secret must resolve on this node, as `apply` requires of the file (a reference that
 * cannot would only fail when the first threshold is crossed).
 */
export function installPublicationGuard(platform: Platform): void {
  platform.executor.setGuard(async (streamId, events) => {
    await platform.runner.catchUp([platform.routing.name, platform.keys.name]);
    const family = splitStream(streamId)?.[0];
    if (family === 'provider' || family === 'deployment' || family === 'price' || family === 'alias') {
      assertSafeCatalogChange(platform.routing.state, streamId, events);
    }
    if (family === 'apikey') {
      for (const event of events) {
        if (!isSwitchyardEvent(event) || event.type !== 'ApiKeyIssued') continue;
        const { tenantId } = event.data;
        if (platform.keys.state.tenants.get(tenantId)?.status !== 'active') {
          throw new DomainError('tenant_not_found', `Tenant ${tenantId} does not exist or is not active`, 422);
        }
      }
    }
    // The routing snapshot folds content policies with the tenants, keys and aliases they are attached to.
    assertContentPolicyChange(platform.routing.state, events, process.env);
    for (const event of events) {
      if (!isSwitchyardEvent(event)) continue;
      if (event.type === 'TenantBudgetSet' || event.type === 'ApiKeyIssued' || event.type === 'ApiKeyUpdated') assertWebhookSecretResolves(event.data.budget);
    }
  });
}


function assertWebhookSecretResolves(budget: TenantBudget | null | undefined): void {
  const secret = budget?.webhook?.secret;
  if (!secret) return;
  try {
    resolveSecret(secret);
  } catch (error) {
    throw new DomainError('unresolvable_secret', `budget.webhook.secret: ${secret} cannot be resolved on this node (${(error as Error).message}); nothing was changed`, 422);
  }
}
