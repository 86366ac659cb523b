import type { DomainEvent } from './event.js';

/**
 * One field of a definition whose runtime edit a configuration file adopted: the file now says the value
 * that edit set, so the file owns the field again. The edit is named by its event (the one that last
 * changed the field when the file adopted it), never by its value: a later edit is another event, and the
 * field is then a runtime edit again.
 */
export interface AdoptedField {
  /** The field's dotted path as ownership tracks it on the stream (`policy.maxAttempts`; `v2.inputPer1M` for a price version). */
  field: string;
  /** The runtime edit adopted: its event id, actor and time, for the audit trail. */
  eventId: string;
  actor: string;
  recordedAt: string;
}

/** The adopted fields of one definition, by its stream (`alias-chat`, `tenant-acme`, `price-primary`). */
export interface AdoptedDefinition {
  stream: string;
  fields: AdoptedField[];
}

/**
 * An apply found file-declared fields whose running value the file now says too, last set at runtime
 * (admin API, CLI): from this event on they are the file's. `source` is the file (the actor is
 * `config:<source>`). Carries field paths and event ids only, never values.
 */
export type ConfigurationAdopted = DomainEvent<'ConfigurationAdopted', { source: string; definitions: AdoptedDefinition[] }>;

export type ConfigurationEvent = ConfigurationAdopted;
export const CONFIGURATION_EVENT_TYPES = ['ConfigurationAdopted'] as const;

/** One stream for every adoption, whatever the file and the definition: the configuration's own record. */
export const CONFIGURATION_STREAM = 'configuration';
