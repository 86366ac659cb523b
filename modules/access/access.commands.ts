import { apiKeyStream, tenantStream } from '../../events/index.js';
import { deciderCommand } from '../../src/kernel/index.js';
import { apiKeyDecider } from './api-key/api-key.decider.js';
import { tenantDecider } from './tenant/tenant.decider.js';

/** Access-control CQRS commands (tenants and API keys). */
export const TenantCommand = deciderCommand('Tenant', tenantDecider, (c) => tenantStream(c.tenantId));
export const ApiKeyCommand = deciderCommand('ApiKey', apiKeyDecider, (c) => apiKeyStream(c.keyId));
