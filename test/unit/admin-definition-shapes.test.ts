import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readApiKey } from '../../modules/access/api-key/api-key-definition.js';
import { readTenant } from '../../modules/access/tenant/tenant-definition.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { API_KEY_FIELDS, BUDGET_FIELDS, LIMITS_FIELDS, TENANT_FIELDS, WEBHOOK_FIELDS } from '../../src/config/gateway-config-schema.js';
import { type ConfigFields, DefinitionReader, fieldNames } from '../../src/kernel/index.js';

/**
 * The API document (docs/openapi.json, served at /docs) describes the tenant and key bodies with the
 * fields of the configuration file's schema, which the admin API reads them by: a field added to the
 * file and not to the document (or the reverse) fails here.
 */
describe('the API document names the file\'s fields for tenants, keys, budgets and limits', () => {
  const schemas = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url)), 'utf8')).components.schemas;
  const without = (fields: ConfigFields, left: string[]) => fieldNames(fields).filter((name) => !left.includes(name)).sort();

  test.each([
    ['CreateTenant', fieldNames(TENANT_FIELDS).sort()],
    ['IssueKey', without(API_KEY_FIELDS, ['key'])],
    ['KeyChanges', without(API_KEY_FIELDS, ['id', 'tenant', 'key'])],
    ['Limits', fieldNames(LIMITS_FIELDS).sort()],
    ['TenantBudget', fieldNames(BUDGET_FIELDS).sort()],
    ['BudgetWebhook', fieldNames(WEBHOOK_FIELDS).sort()],
  ])('%s', (schema, fields) => {
    expect(Object.keys(schemas[schema].properties).sort()).toEqual(fields);
  });

  test('required members are the file\'s required ones (the API generates a key\'s id and secret)', () => {
    const required = (fields: ConfigFields, left: string[] = []) => Object.entries(fields).filter(([name, field]) => field.required && !left.includes(name)).map(([name]) => name).sort();
    expect([...schemas.CreateTenant.required].sort()).toEqual(required(TENANT_FIELDS));
    expect([...schemas.IssueKey.required].sort()).toEqual(required(API_KEY_FIELDS, ['id', 'key']));
    expect([...schemas.BudgetWebhook.required].sort()).toEqual(required(WEBHOOK_FIELDS));
  });
});

describe('docs/keys-limits-budgets.md: the admin API bodies it shows are the YAML it shows', () => {
  const page = readFileSync(fileURLToPath(new URL('../../../docs/keys-limits-budgets.md', import.meta.url)), 'utf8');
  const yaml = /## Onboard a tenant and a key[\s\S]*?```yaml\n([\s\S]*?)```/.exec(page)![1];
  const section = /<!-- admin-api-parity:start -->([\s\S]*?)<!-- admin-api-parity:end -->/.exec(page)![1];
  const [tenantBody, keyBody] = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]));

  test('the tenant and the key read the same through the API readers as from the file', () => {
    const config = parseGatewayConfig(yaml);
    const reader = new DefinitionReader();
    const tenant = readTenant(reader, tenantBody, '');
    const { key: _secret, ...key } = readApiKey(reader, keyBody, '', 'api');
    expect(reader.problems).toEqual([]);
    expect(tenant).toEqual(config.tenants[0]);
    const { key: _fileSecret, ...fromFile } = config.apiKeys[0];
    expect(key).toEqual(fromFile);
  });
});
