import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, hashApiKey } from '../../modules/access/api-key/key-format.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { planApply } from '../../src/config/apply/apply-plan.js';
import { CONFIGURATION_EXAMPLE } from '../../src/config/configuration-example.js';
import { exportConfiguration } from '../../src/config/export/configuration-export.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { installSecretReferencePolicy } from '../../src/kernel/secret-references/secret-reference.js';
import { secretReferencePolicy } from '../../src/kernel/secret-references/secret-reference-policy.js';
import { decidePlannedStep } from '../support/planned-steps.js';

/**
 * `switchyard config export`: the running definitions — the file's and those made at runtime — as a file
 * the gateway accepts and that applies with no change; secrets stay references (keys their stored hash).
 */
describe('configuration export', () => {
  const now = new Date('2026-12-01T00:00:00Z');
  let secrets: string;
  let state: ControlPlaneState;
  const apiKey = generateApiKey();

  beforeAll(() => {
    secrets = mkdtempSync(join(tmpdir(), 'switchyard-export-'));
    for (const [, name] of CONFIGURATION_EXAMPLE.matchAll(/env:([A-Z0-9_]+)/g)) process.env[name] = name.endsWith('_APP_KEY') ? generateApiKey() : `${name.toLowerCase()}-value:secret`;
    writeFileSync(join(secrets, 'acme-reports-key'), `${generateApiKey()}\n`, { mode: 0o600 });
    installSecretReferencePolicy({ ...secretReferencePolicy({}, null), secretDirectories: [secrets] });
    const config = parseGatewayConfig(CONFIGURATION_EXAMPLE.replaceAll('file:/run/secrets/', `file:${secrets}/`));
    state = ControlPlaneState.empty();
    for (const step of planApply(config, state, { now, prune: false }).steps) {
      const [streamId, events] = decidePlannedStep(state, step, { now, actor: 'config:example.yaml' });
      state = state.with(streamId, events);
    }
    // Runtime edits: an alias policy, a future price, tenant limits, a tenant and a key made through the API.
    const chat = state.aliases.get('chat-fast');
    if (chat?.status !== 'published') throw new Error('the example has no alias chat-fast');
    state = state
      .with('alias-chat-fast', [{ type: 'AliasPublished', data: { alias: 'chat-fast', version: chat.version + 1, ...chat.definition, policy: { ...chat.definition.policy, maxAttempts: 2 } } }])
      .with('price-gpt-4o-mini', [{
        type: 'PriceScheduled',
        data: { deploymentId: 'gpt-4o-mini', effectiveFrom: '2027-01-01T00:00:00.000Z', inputPer1M: '0.2', outputPer1M: '0.8', cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' },
      }])
      .with('tenant-acme', [{ type: 'TenantLimitsSet', data: { tenantId: 'acme', limits: { rpm: 10, tpm: null, maxConcurrency: 4 } } }])
      .with('tenant-globex', [{ type: 'TenantCreated', data: { tenantId: 'globex', name: 'Globex Corp' } }])
      .with('apikey-globex-app', [{
        type: 'ApiKeyIssued',
        data: { keyId: 'globex-app', tenantId: 'globex', hash: hashApiKey(apiKey), prefix: apiKey.slice(0, 10), scopes: ['inference'], aliases: [], limits: { rpm: 5, tpm: null, maxConcurrency: null }, expiresAt: null },
      }]);
  });
  afterAll(() => rmSync(secrets, { recursive: true, force: true }));

  test('the export is a valid file that applies with no change and no drift', () => {
    const yaml = exportConfiguration(state, now);
    const exported = parseGatewayConfig(yaml, 'export.yaml');
    expect(planApply(exported, state, { now, prune: false })).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
    // Nothing is missing either: pruning against it would stop nothing.
    expect(planApply(exported, state, { now, prune: true }).steps).toEqual([]);
  });

  test('it holds the runtime edits, secret references as references and keys as their stored hash, never a secret', () => {
    const yaml = exportConfiguration(state, now);
    const exported = parseGatewayConfig(yaml, 'export.yaml');
    expect(exported.aliases.find((a) => a.name === 'chat-fast')?.policy.maxAttempts).toBe(2);
    expect(exported.deployments.find((d) => d.id === 'gpt-4o-mini')?.price).toMatchObject({ inputPer1M: '0.2', effectiveFrom: '2027-01-01T00:00:00.000Z' });
    expect(exported.tenants.find((t) => t.id === 'acme')?.limits).toEqual({ rpm: 10, tpm: null, maxConcurrency: 4 });
    expect(exported.apiKeys.find((k) => k.id === 'globex-app')).toMatchObject({ tenant: 'globex', key: `sha256:${hashApiKey(apiKey)}`, limits: { rpm: 5 } });
    expect(yaml).toContain('apiKey: env:OPENAI_API_KEY');
    expect(yaml).toContain('secret: env:ACME_WEBHOOK_KEY');
    expect(yaml).not.toContain(apiKey);
    for (const [, name] of CONFIGURATION_EXAMPLE.matchAll(/env:([A-Z0-9_]+)/g)) expect(yaml).not.toContain(process.env[name]!);
  });

  test('what is retired, revoked or removed is left out', () => {
    const stopped = state
      .with('apikey-globex-app', [{ type: 'ApiKeyRevoked', data: { keyId: 'globex-app', reason: 'test' } }]);
    const exported = parseGatewayConfig(exportConfiguration(stopped, now));
    expect(exported.apiKeys.map((k) => k.id)).not.toContain('globex-app');
  });
});
