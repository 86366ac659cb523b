import type { DomainEvent, RecordedEvent } from '../src/kernel/index.js';
import { ADMIN_TOKEN_EVENT_TYPES, type AdminTokenEvent } from './admin-token-events.js';
import { ALIAS_EVENT_TYPES, type AliasEvent } from './alias-events.js';
import { API_KEY_EVENT_TYPES, type ApiKeyEvent } from './api-key-events.js';
import { BREAKER_EVENT_TYPES, type BreakerEvent } from './breaker-events.js';
import { CONFIGURATION_EVENT_TYPES, type ConfigurationEvent } from './configuration-events.js';
import { CONSOLE_SESSION_EVENT_TYPES, type ConsoleSessionEvent } from './console-session-events.js';
import { CONTENT_POLICY_EVENT_TYPES, type ContentPolicyEvent } from './content-policy-events.js';
import { DEPLOYMENT_EVENT_TYPES, type DeploymentEvent } from './deployment-events.js';
import { PRICE_EVENT_TYPES, type PriceEvent } from './price-events.js';
import { PROVIDER_EVENT_TYPES, type ProviderEvent } from './provider-events.js';
import { REQUEST_EVENT_TYPES, type RequestEvent } from './request-events.js';
import { TENANT_EVENT_TYPES, type TenantEvent } from './tenant-events.js';

/** Every event Switchyard writes: one discriminated union over `type`, so readers narrow with a switch, never a cast. */
export type SwitchyardEvent = ProviderEvent | DeploymentEvent | PriceEvent | AliasEvent | TenantEvent | ApiKeyEvent | RequestEvent | BreakerEvent | AdminTokenEvent
  | ConfigurationEvent | ContentPolicyEvent | ConsoleSessionEvent;

export type SwitchyardEventType = SwitchyardEvent['type'];

export type EventOfType<T extends SwitchyardEventType> = Extract<SwitchyardEvent, { type: T }>;

/** A recorded event with its payload typed by its `type` (readers see the latest schema: upcasting runs on read). */
export type Recorded<E extends SwitchyardEvent = SwitchyardEvent> = E extends SwitchyardEvent
  ? Omit<RecordedEvent, 'type' | 'data'> & { readonly type: E['type']; readonly data: E['data'] }
  : never;

const SWITCHYARD_EVENT_TYPES = [
  ...PROVIDER_EVENT_TYPES, ...DEPLOYMENT_EVENT_TYPES, ...PRICE_EVENT_TYPES, ...ALIAS_EVENT_TYPES, ...TENANT_EVENT_TYPES,
  ...API_KEY_EVENT_TYPES, ...REQUEST_EVENT_TYPES, ...BREAKER_EVENT_TYPES, ...ADMIN_TOKEN_EVENT_TYPES, ...CONFIGURATION_EVENT_TYPES,
  ...CONTENT_POLICY_EVENT_TYPES, ...CONSOLE_SESSION_EVENT_TYPES,
] as const satisfies readonly SwitchyardEventType[];

// A member of the union missing from the lists would be dropped by every reader as unknown: a compile error instead.
type Unlisted = Exclude<SwitchyardEventType, (typeof SWITCHYARD_EVENT_TYPES)[number]>;
const _everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;

/**
 * Whether `event` is one of `types`, and then typed as that member of the union. The one place where a
 * type name vouches for a payload: the store keeps payloads as JSON and the kernel hands events over as
 * `DomainEvent` (it cannot know this catalog), but everything in the log was written through these
 * contracts and is upcast to their latest version on read, so a type name the catalog lists is proof
 * enough. The name itself is checked: an event of a type this build does not list never gets typed.
 */
export function isEventOf<E extends DomainEvent, T extends SwitchyardEventType>(types: readonly T[], event: E): event is E & EventOfType<T> {
  return types.some((type) => type === event.type);
}

/** The whole catalog as a set: `recorded()` asks it of every event the cost ledger's pages carry. */
const KNOWN_TYPES: ReadonlySet<string> = new Set(SWITCHYARD_EVENT_TYPES);

/** `isEventOf` the whole catalog, by one set lookup rather than a scan of every type name. */
export function isSwitchyardEvent<E extends DomainEvent>(event: E): event is E & SwitchyardEvent {
  return KNOWN_TYPES.has(event.type);
}

/** The log as the union; an event of a type this build does not know is left out (no reader could narrow it). */
export function recorded(events: readonly RecordedEvent[]): readonly Recorded[] {
  return events.filter(isSwitchyardEvent);
}
