import { changedFields, definitionOf, fieldsOf } from '../../src/config/apply/definition-fields.js';
import { fieldHistory } from '../../src/config/apply/field-provenance.js';
import type { RecordedEvent } from '../../src/kernel/event-store/event-store.js';

/** The fields ownership is tracked on: a definition's leaves, lists whole, null and left out alike. */
describe('definition fields', () => {
  test('a definition is its leaves; lists are one field each; back again it is the same definition', () => {
    const alias = { strategy: 'priority', routes: [{ deploymentId: 'a', priority: 0, weight: 1 }], policy: { maxAttempts: null, regions: [], limits: { rpm: 5 } } };
    const fields = fieldsOf(alias);
    expect([...fields.keys()]).toEqual(['strategy', 'routes', 'policy.maxAttempts', 'policy.regions', 'policy.limits.rpm']);
    expect(definitionOf(fields)).toEqual(alias);
  });

  test('left out and null are the same value; a changed list is one changed field', () => {
    expect(changedFields(fieldsOf({ limits: { rpm: null } }), fieldsOf({ limits: {} }))).toEqual([]);
    expect(changedFields(fieldsOf({ scopes: ['a'], budget: null }), fieldsOf({ scopes: ['a', 'b'], budget: { monthlyUsd: '5' } }))).toEqual(['budget.monthlyUsd', 'scopes']);
  });

  test('a null parent gives way to members kept from elsewhere', () => {
    const fields = new Map<string, unknown>([['budget', null], ['budget.monthlyUsd', '5'], ['budget.softPct', 80]]);
    expect(definitionOf(fields)).toEqual({ budget: { monthlyUsd: '5', softPct: 80 } });
  });

  test('an event that writes a value a field already has does not take the field over', () => {
    let version = 0;
    const published = (actor: string, maxAttempts: number | null, ttftTimeoutMs: number | null): RecordedEvent => ({
      globalPosition: ++version, transactionId: 0n as never, streamId: 'alias-chat', streamVersion: version, eventId: `e${version}`, type: 'AliasPublished', schemaVersion: 1,
      data: { alias: 'chat', version, strategy: 'priority', routes: [{ deploymentId: 'a', priority: 0, weight: 1 }], policy: { requiredCapabilities: [], maxAttempts, ttftTimeoutMs, regions: [] }, visibility: 'public' },
      metadata: { actor }, recordedAt: new Date(Date.UTC(2026, 0, version)),
    });
    const history = fieldHistory('alias', 'chat', [published('config:a.yaml', null, null), published('admin:root', 2, null), published('config:a.yaml', 2, 5000)]);
    expect(history.get('policy.maxAttempts')?.actor).toBe('admin:root');
    expect(history.get('policy.ttftTimeoutMs')?.actor).toBe('config:a.yaml');
    expect(history.get('strategy')).toEqual({ actor: 'config:a.yaml', at: new Date(Date.UTC(2026, 0, 1)), eventId: 'e1' });
  });

  test('an adoption that names a field\'s last runtime edit makes the field the adopting file\'s; a later edit, or another stream\'s adoption, does not', () => {
    let version = 0;
    const published = (actor: string, maxAttempts: number | null): RecordedEvent => ({
      globalPosition: ++version, transactionId: 0n as never, streamId: 'alias-chat', streamVersion: version, eventId: `e${version}`, type: 'AliasPublished', schemaVersion: 1,
      data: { alias: 'chat', version, strategy: 'priority', routes: [{ deploymentId: 'a', priority: 0, weight: 1 }], policy: { requiredCapabilities: [], maxAttempts, ttftTimeoutMs: null, regions: [] }, visibility: 'public' },
      metadata: { actor }, recordedAt: new Date(Date.UTC(2026, 0, version)),
    });
    const adopted = (stream: string, eventId: string, field = 'policy.maxAttempts'): RecordedEvent => ({
      globalPosition: 100, transactionId: 0n as never, streamId: 'configuration', streamVersion: 1, eventId: `adoption-of-${eventId}`, type: 'ConfigurationAdopted', schemaVersion: 1,
      data: { source: 'b.yaml', definitions: [{ stream, fields: [{ field, eventId, actor: 'admin:root', recordedAt: '2026-01-02T00:00:00.000Z' }] }] },
      metadata: { actor: 'config:b.yaml' }, recordedAt: new Date(Date.UTC(2026, 1, 1)),
    });
    const events = [published('config:a.yaml', null), published('admin:root', 2)];
    expect(fieldHistory('alias', 'chat', events, [adopted('alias-chat', 'e2')]).get('policy.maxAttempts'))
      .toEqual({ actor: 'config:b.yaml', at: new Date(Date.UTC(2026, 1, 1)), eventId: 'adoption-of-e2' });
    // Another stream's, another field's, or an older edit's adoption changes nothing.
    for (const other of [adopted('alias-other', 'e2'), adopted('alias-chat', 'e2', 'policy.ttftTimeoutMs'), adopted('alias-chat', 'e1')]) {
      expect(fieldHistory('alias', 'chat', events, [other]).get('policy.maxAttempts')?.actor).toBe('admin:root');
    }
    // A runtime edit after the adoption is the field's writer again.
    const later = [...events, published('admin:root', 3)];
    expect(fieldHistory('alias', 'chat', later, [adopted('alias-chat', 'e2')]).get('policy.maxAttempts')).toMatchObject({ actor: 'admin:root', eventId: 'e3' });
  });
});
