import type { RecordedEvent } from '../src/kernel/index.js';
import type { AdminTokenEvent } from './admin-token-events.js';
import type { AliasEvent } from './alias-events.js';
import type { ApiKeyEvent } from './api-key-events.js';
import type { BreakerEvent } from './breaker-events.js';
import type { DeploymentEvent } from './deployment-events.js';
import type { PriceEvent } from './price-events.js';
import type { ProviderEvent } from './provider-events.js';
import type { RequestEvent } from './request-events.js';
import type { TenantEvent } from './tenant-events.js';

/** Every event Switchyard writes: one discriminated union over `type`, so readers narrow with a switch, never a cast. */
export type SwitchyardEvent = ProviderEvent | DeploymentEvent | PriceEvent | AliasEvent | TenantEvent | ApiKeyEvent | RequestEvent | BreakerEvent | AdminTokenEvent;

export type SwitchyardEventType = SwitchyardEvent['type'];

export type EventOfType<T extends SwitchyardEventType> = Extract<SwitchyardEvent, { type: T }>;

/** A recorded event with its payload typed by its `type` (readers see the latest schema: upcasting runs on read). */
export type Recorded<E extends SwitchyardEvent = SwitchyardEvent> = E extends SwitchyardEvent
  ? Omit<RecordedEvent, 'type' | 'data'> & { readonly type: E['type']; readonly data: E['data'] }
  : never;

/**
 * The log as the union. The store keeps payloads as JSON; everything in it was written through these
 * contracts (and upcast to their latest versions on read), which is what this view asserts.
 */
export function recorded(events: readonly RecordedEvent[]): readonly Recorded[] {
  return events as readonly Recorded[];
}
