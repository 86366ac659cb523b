import type { ProviderEvent, ProviderSettings } from '../../events/provider-events.js';
import { providerDecider } from '../../modules/catalog/provider/provider.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(providerDecider);

const settings = (overrides: Partial<ProviderSettings> = {}): ProviderSettings => ({
  type: 'openai', baseUrl: 'https://api.openai.com/v1', credentialRef: 'env:OPENAI_API_KEY', apiVersion: null, region: null,
  allowPrivateNetwork: false, ...overrides,
});
const registered = (s = settings()): ProviderEvent => ({ type: 'ProviderRegistered', data: { providerId: 'openai-main', ...s } });
const removed: ProviderEvent = { type: 'ProviderRemoved', data: { providerId: 'openai-main', reason: 'migrated' } };
const register = (s = settings()) => ({ type: 'RegisterProvider' as const, providerId: 'openai-main', settings: s });
const update = (s: ProviderSettings) => ({ type: 'UpdateProvider' as const, providerId: 'openai-main', settings: s });

describe('provider aggregate', () => {
  describe('RegisterProvider', () => {
    test('a new provider is registered with its settings and only a reference to its credential', () => {
      spec.given([]).when(register()).then([registered()]);
    });
    test('registering the same settings again changes nothing (idempotent apply)', () => {
      spec.given([registered()]).when(register()).thenNothing();
    });
    test('a duplicate id with different settings is refused', () => {
      spec.given([registered()]).when(register(settings({ baseUrl: 'https://other.example.com/v1' }))).thenThrows('provider_exists', 422);
    });
    test('a removed id cannot be registered again', () => {
      spec.given([registered(), removed]).when(register()).thenThrows('provider_removed', 409);
    });
    const unsafe: Array<[string, Partial<ProviderSettings>]> = [
      ['a non-http(s) scheme', { baseUrl: 'file:///etc/passwd' }],
      ['embedded credentials', { baseUrl: 'https://user:pass@api.example.com/v1' }],
      ['the cloud metadata address', { baseUrl: 'http://169.254.169.254/latest' }],
      ['the GCP metadata host', { baseUrl: 'http://metadata.google.internal/v1' }],
      ['a link-local address', { baseUrl: 'http://169.254.10.1/v1' }],
      ['an IPv6 link-local address', { baseUrl: 'http://[fe80::1]/v1' }],
      ['the metadata address written IPv4-mapped', { baseUrl: 'http://[::ffff:a9fe:a9fe]/' }],
      ['a name that embeds the metadata address', { baseUrl: 'http://169.254.169.254.nip.io/' }],
      ['the GCP metadata host with a trailing dot', { baseUrl: 'http://metadata.google.internal./' }],
      ['a loopback address without allowPrivateNetwork', { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1' }],
      ['a private (RFC 1918) address without allowPrivateNetwork', { type: 'openai-compatible', baseUrl: 'http://10.0.0.5/v1' }],
      ['a query string', { baseUrl: 'https://api.example.com/v1?key=x' }],
      ['an invalid URL', { baseUrl: 'not a url' }],
      ['a literal secret instead of a reference', { credentialRef: 'sk-live-0123456789' }],
      ['an unknown type', { type: 'acme' as ProviderSettings['type'] }],
      ['an openai-compatible provider without a baseUrl', { type: 'openai-compatible', baseUrl: null }],
      ['an azure-openai provider without an apiVersion', { type: 'azure-openai', baseUrl: 'https://x.openai.azure.com' }],
      ['a bedrock provider without a region', { type: 'bedrock', baseUrl: null }],
    ];
    test.each(unsafe)('refuses %s', (_name, overrides) => {
      spec.given([]).when(register(settings(overrides))).thenThrows('invalid_provider', 422);
    });
    test('a link-local address is allowed when the operator explicitly allows private networks', () => {
      const s = settings({ type: 'openai-compatible', baseUrl: 'http://169.254.10.1/v1', allowPrivateNetwork: true });
      spec.given([]).when(register(s)).then([registered(s)]);
    });
    test('loopback and private addresses are allowed when the operator explicitly allows private networks', () => {
      for (const baseUrl of ['http://127.0.0.1:8000/v1', 'http://10.0.0.5/v1', 'http://[fd12::1]/v1']) {
        const s = settings({ type: 'openai-compatible', baseUrl, allowPrivateNetwork: true });
        spec.given([]).when(register(s)).then([registered(s)]);
      }
    });
    test('the metadata address is refused even when private networks are allowed', () => {
      const s = settings({ baseUrl: 'http://169.254.169.254/', allowPrivateNetwork: true });
      spec.given([]).when(register(s)).thenThrows('invalid_provider', 422);
    });
    test('the refusal never echoes the credentials embedded in a URL', () => {
      const error = spec.given([]).when(register(settings({ baseUrl: 'https://admin:hunter2-secret@api.example.com' }))).thenThrows('invalid_provider');
      expect(error.message).not.toContain('hunter2');
    });
  });

  describe('UpdateProvider', () => {
    test('changed settings are recorded as ProviderUpdated', () => {
      const next = settings({ baseUrl: 'https://eu.api.openai.com/v1' });
      spec.given([registered()]).when(update(next)).then([{ type: 'ProviderUpdated', data: { providerId: 'openai-main', ...next } }]);
    });
    test('unchanged settings append nothing', () => {
      spec.given([registered()]).when(update(settings())).thenNothing();
    });
    test('an unknown provider cannot be updated', () => {
      spec.given([]).when(update(settings())).thenThrows('provider_not_found', 404);
    });
    test('a removed provider cannot be updated', () => {
      spec.given([registered(), removed]).when(update(settings({ region: 'eu' }))).thenThrows('provider_removed', 409);
    });
    test('an update to an unsafe URL is refused', () => {
      spec.given([registered()]).when(update(settings({ baseUrl: 'gopher://x' }))).thenThrows('invalid_provider', 422);
    });
  });

  describe('RemoveProvider', () => {
    test('an active provider is removed with its reason', () => {
      spec.given([registered()]).when({ type: 'RemoveProvider', providerId: 'openai-main', reason: 'migrated' }).then([removed]);
    });
    test('an unknown provider cannot be removed', () => {
      spec.given([]).when({ type: 'RemoveProvider', providerId: 'openai-main', reason: null }).thenThrows('provider_not_found', 404);
    });
    test('a removed provider cannot be removed twice', () => {
      spec.given([registered(), removed]).when({ type: 'RemoveProvider', providerId: 'openai-main', reason: null }).thenThrows('provider_removed', 409);
    });
  });
});
