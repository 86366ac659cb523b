/** A domain event as deciders emit it: a discriminated union member. Metadata is added when appended. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}

/** Current schema version of every event type; readers always see this version (older ones are upcast). */
export const SCHEMA_VERSIONS: Readonly<Record<string, number>> = {};
