import { apiKeyStream } from '../../events/api-key-events.js';
import { tenantStream } from '../../events/tenant-events.js';
import { deciderCommand } from '../../src/kernel/commands/decider-command.js';
import { apiKeyDecider } from './api-key/api-key.decider.js';
import { tenantDecider } from './tenant/tenant.decider.js';

/** Access-control CQRS commands (tenants and API keys). */
export const TenantCommand = deciderCommand('Tenant', tenantDecider, (c) => tenantStream(c.tenantId));
export const ApiKeyCommand = deciderCommand('ApiKey', apiKeyDecider, (c) => apiKeyStream(c.keyId));
