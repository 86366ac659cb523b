import { isEventOf, PROVIDER_EVENT_TYPES, recorded } from '../../events/index.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import type { RecordedEvent } from '../../src/kernel/index.js';

const stored = (globalPosition: number, streamId: string, type: string, data: unknown): RecordedEvent => ({
  globalPosition, transactionId: 1n, streamId, streamVersion: globalPosition, eventId: `e${globalPosition}`, type, schemaVersion: 1,
  data, metadata: {}, recordedAt: new Date('2026-03-01T00:00:00Z'),
});

const registered = stored(1, 'provider-p1', 'ProviderRegistered', {
  providerId: 'p1', type: 'mock', baseUrl: null, credentialRef: null, apiVersion: null, region: null, allowPrivateNetwork: false,
});

describe('stored events become the typed union by their type name', () => {
  test('the log as the union keeps the types the catalog lists and leaves out the others', () => {
    const unknown = stored(2, 'provider-p1', 'ProviderRenamed', { providerId: 'p1' });
    expect(recorded([registered, unknown]).map((event) => event.eventId)).toEqual(['e1']);
  });

  test('a family is its own event types only', () => {
    expect(isEventOf(PROVIDER_EVENT_TYPES, registered)).toBe(true);
    expect(isEventOf(PROVIDER_EVENT_TYPES, stored(2, 'tenant-t1', 'TenantCreated', { tenantId: 't1', name: 'T' }))).toBe(false);
  });

  test('the control-plane state folds a stream with its family evolve and skips a type that is not the family\'s', () => {
    const state = ControlPlaneState.empty().withAll([registered, stored(2, 'provider-p1', 'TenantSuspended', { tenantId: 'p1', reason: null })]);
    expect(state.providers.get('p1')).toMatchObject({ status: 'active', providerId: 'p1' });
    expect(state.tenants.size).toBe(0);
    expect(state.versions.get('provider-p1')).toBe(2);
  });
});
