import { isEventOf } from '../../../events/index.js';
import { ControlPlaneState } from '../../../projections/control-plane/index.js';
import type { RecordedEvent } from '../../kernel/event-store/event-store.js';
import { changedFields, fieldsOf } from './definition-fields.js';

/** The definitions a configuration file declares, by the family of their streams. */
export type DefinitionFamily = 'provider' | 'deployment' | 'price' | 'alias' | 'tenant' | 'apikey' | 'content-policy';

/**
 * Who last changed a field, and when: the actor and time of the event that changed it, or of the
 * configuration's adoption of that change (then the actor is the adopting file's `config:` actor).
 */
export interface FieldWriter {
  actor: string;
  at: Date;
  /** The event that changed the field (for an adopted field, the adoption's): what an adoption names. */
  eventId: string;
}

/** Every field of one definition with the event that last changed it. */
export type FieldHistory = ReadonlyMap<string, FieldWriter>;

/** Events of configuration applies carry an actor of this form (`config:switchyard.yaml`); every other actor is a runtime edit. */
const CONFIGURATION_ACTOR = /^config:/;

export function isConfigurationActor(actor: string): boolean {
  return CONFIGURATION_ACTOR.test(actor);
}

/**
 * A definition as the configuration file can say it, as fields: what `apply` compares with the file and
 * what ownership is tracked on. Capabilities are a set (their order means nothing); a price schedule is
 * its versions by number, each written once.
 */
export function definitionFields(state: ControlPlaneState, family: DefinitionFamily, id: string): Map<string, unknown> {
  switch (family) {
    case 'provider': {
      const provider = state.providers.get(id);
      return provider && provider.status !== 'absent' ? fieldsOf(provider.settings) : new Map();
    }
    case 'deployment': {
      const deployment = state.deployments.get(id);
      if (!deployment || deployment.status === 'absent') return new Map();
      return fieldsOf({ ...deployment.settings, capabilities: [...deployment.settings.capabilities].sort(), status: deployment.status });
    }
    case 'price': {
      const schedule = state.prices.get(id)?.schedule ?? [];
      return fieldsOf(Object.fromEntries(schedule.map((entry) => [`v${entry.version}`, { effectiveFrom: entry.effectiveFrom.toISOString(), ...entry.table }])));
    }
    case 'alias': {
      const alias = state.aliases.get(id);
      return alias && alias.status !== 'absent' ? fieldsOf({ ...alias.definition, status: alias.status }) : new Map();
    }
    case 'tenant': {
      const tenant = state.tenants.get(id);
      return tenant && tenant.status !== 'absent'
        ? fieldsOf({ limits: tenant.limits, budget: tenant.budget, contentPolicy: tenant.contentPolicy, status: tenant.status })
        : new Map();
    }
    case 'apikey': {
      const key = state.keys.get(id);
      if (!key || key.status === 'absent') return new Map();
      const { tenantId: _tenant, ...grant } = key.grant;
      return fieldsOf({ ...grant, hash: key.hash, status: key.status });
    }
    case 'content-policy': {
      const policy = state.contentPolicies.get(id);
      return policy && policy.status !== 'absent' ? fieldsOf({ ...policy.definition, status: policy.status }) : new Map();
    }
  }
}

/**
 * Which event last changed each field of a definition: its stream folded event by event, a field's writer
 * being the event after which its value differs. An event that writes a value a field already has does not
 * take it over (re-publishing an alias with one field changed changes only that field's writer).
 *
 * `adoptions`, the configuration stream's events: a field whose last change is a runtime edit that a file
 * adopted (ConfigurationAdopted names that edit's event) is the adopting file's from the adoption on. A
 * runtime edit after the adoption is another event, which no adoption names: the field is the runtime's again.
 */
export function fieldHistory(family: DefinitionFamily, id: string, events: readonly RecordedEvent[], adoptions: readonly RecordedEvent[] = []): FieldHistory {
  const writers = new Map<string, FieldWriter>();
  let state = ControlPlaneState.empty();
  let before = definitionFields(state, family, id);
  for (const event of events) {
    state = state.withAll([event]);
    const after = definitionFields(state, family, id);
    for (const field of changedFields(before, after)) writers.set(field, { actor: actorOf(event), at: event.recordedAt, eventId: event.eventId });
    before = after;
  }
  const stream = events[0]?.streamId;
  for (const adoption of adoptions) {
    if (stream === undefined || !isEventOf(ADOPTION, adoption)) continue;
    for (const definition of adoption.data.definitions) {
      if (definition.stream !== stream) continue;
      for (const adopted of definition.fields) {
        if (writers.get(adopted.field)?.eventId !== adopted.eventId) continue;
        writers.set(adopted.field, { actor: actorOf(adoption), at: adoption.recordedAt, eventId: adoption.eventId });
      }
    }
  }
  return writers;
}

const ADOPTION = ['ConfigurationAdopted'] as const;

function actorOf(event: RecordedEvent): string {
  return typeof event.metadata.actor === 'string' ? event.metadata.actor : 'unknown';
}
