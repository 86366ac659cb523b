import { assertSafeCatalogChange } from '../modules/catalog/publication-guard.js';
import { splitStream } from '../projections/control-plane/index.js';
import { isSwitchyardEvent } from '../events/switchyard-event.js';
import { DomainError } from './kernel/commands/decider.js';
import type { Platform } from './platform.js';

/** Catalog and key commands are checked against the snapshot they would produce before they are appended. */
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
  });
}

