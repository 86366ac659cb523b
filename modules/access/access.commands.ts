import { apiKeyStream, contentPolicyStream, tenantStream } from '../../events/index.js';
import { deciderCommand } from '../../src/kernel/index.js';
import { apiKeyDecider } from './api-key/api-key.decider.js';
import { tenantDecider } from './tenant/tenant.decider.js';
import { contentPolicyDecider } from './content-policy/content-policy.decider.js';

/** Access-control CQRS commands (tenants, API keys and the content policies attached to them). */
export const TenantCommand = deciderCommand('Tenant', tenantDecider, (c) => tenantStream(c.tenantId));
export const ApiKeyCommand = deciderCommand('ApiKey', apiKeyDecider, (c) => apiKeyStream(c.keyId));
export const ContentPolicyCommand = deciderCommand('ContentPolicy', contentPolicyDecider, (c) => contentPolicyStream(c.policyId));
