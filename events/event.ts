export type { DomainEvent } from '../src/kernel/index.js';

/** Current schema version of every event type; readers always see this version (older ones are upcast). */
export const SCHEMA_VERSIONS: Readonly<Record<string, number>> = {
  /** 2: usage is non-negative integer counts within the plausible bound, and `diagnostics` says when a provider's were replaced. */
  AttemptFinished: 2,
};
