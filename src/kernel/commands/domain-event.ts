/**
 * A domain event as deciders emit it: a discriminated union member. Metadata is added when appended.
 * The kernel's own shape of an event; the catalog of concrete events (events/) builds on it.
 */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}
