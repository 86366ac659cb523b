import {
  ADMIN_TOKEN_EVENT_TYPES, ALIAS_EVENT_TYPES, API_KEY_EVENT_TYPES, BREAKER_EVENT_TYPES, CONFIGURATION_EVENT_TYPES, CONSOLE_SESSION_EVENT_TYPES,
  CONTENT_POLICY_EVENT_TYPES, DEPLOYMENT_EVENT_TYPES, PRICE_EVENT_TYPES, PROVIDER_EVENT_TYPES, REQUEST_EVENT_TYPES, TENANT_EVENT_TYPES,
} from '../../events/index.js';
import { ALL_EVENT_TYPES, ConfigurationError, type EventTypeFilter, type SettingsEnv, declareSettings, textSetting } from '../../src/kernel/index.js';
import type { RelayTransport } from './relay-transport.js';

export { RELAY_BROKER_NAMES, type RelayTransport } from './relay-transport.js';

export interface RelaySettings {
  transport: RelayTransport;
  /** The URL as configured (credentials included: it is handed to the client and never logged). */
  url: string;
  /** `host:port` of each broker (Kafka and NATS take several, comma-separated). */
  servers: string[];
  /** The event types to publish, or every type (the default). */
  events: EventTypeFilter;
  /** The same list as configured, for the start-up line. */
  eventsDescription: string;
}

/**
 * The families SWITCHYARD_RELAY_EVENTS accepts besides single type names: one per aggregate family of
 * events/ (a stream prefix's events), so `request` means every request event this build writes.
 */
export const RELAY_EVENT_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  provider: PROVIDER_EVENT_TYPES,
  deployment: DEPLOYMENT_EVENT_TYPES,
  price: PRICE_EVENT_TYPES,
  alias: ALIAS_EVENT_TYPES,
  tenant: TENANT_EVENT_TYPES,
  apikey: API_KEY_EVENT_TYPES,
  request: REQUEST_EVENT_TYPES,
  breaker: BREAKER_EVENT_TYPES,
  'admin-token': ADMIN_TOKEN_EVENT_TYPES,
  configuration: CONFIGURATION_EVENT_TYPES,
  'content-policy': CONTENT_POLICY_EVENT_TYPES,
  console: CONSOLE_SESSION_EVENT_TYPES,
};

/** Every event type this build writes (what a type name in SWITCHYARD_RELAY_EVENTS is checked against). */
export const RELAYABLE_EVENT_TYPES: readonly string[] = Object.values(RELAY_EVENT_FAMILIES).flat();

export const RELAY_ENVIRONMENT = declareSettings('modules/relay', {
  SWITCHYARD_RELAY_URL: {
    type: '`nats://host:4222[,host:port]`, `amqp[s]://user:pass@host:5672[/vhost]` or `kafka://host:9092[,host:port]`',
    default: 'unset: no relay',
    meaning:
      'publish every committed event, in commit order, to this broker (NATS JetStream stream `SWITCHYARD`, RabbitMQ topic exchange ' +
      '`switchyard.events` or Kafka topic `switchyard.events`); see docs/events-out.md',
  },
  SWITCHYARD_RELAY_EVENTS: {
    type: 'comma-separated event types or families (`request`, `tenant`, `apikey`, `breaker`, …)',
    default: 'every event type',
    meaning: 'the events the relay publishes; an unknown name stops the start',
  },
});

/** The relay's settings, or null when SWITCHYARD_RELAY_URL is unset; a URL or event name that cannot be used stops the start. */
export function readRelaySettings(env: SettingsEnv): RelaySettings | null {
  const raw = textSetting(env, RELAY_ENVIRONMENT.SWITCHYARD_RELAY_URL)?.trim();
  if (!raw) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
  const transport: RelayTransport | null = scheme === 'nats' ? 'nats' : scheme === 'amqp' || scheme === 'amqps' ? 'amqp' : scheme === 'kafka' ? 'kafka' : null;
  if (!transport) {
    throw new ConfigurationError('SWITCHYARD_RELAY_URL must start with nats://, amqp://, amqps:// or kafka:// (see docs/events-out.md)');
  }
  checkCredentials(raw);
  checkNothingIgnored(raw, transport);
  const servers = serversOf(raw, transport);
  const { events, description } = readEvents(textSetting(env, RELAY_ENVIRONMENT.SWITCHYARD_RELAY_EVENTS));
  return { transport, url: raw, servers, events, eventsDescription: description };
}

/**
 * The user and password of the URL must decode (percent-encoding): the broker's client decodes them when it
 * connects, on the relay's thread, where a failure would only ever read as the broker being unavailable.
 * The message names neither.
 */
function checkCredentials(raw: string): void {
  const authority = raw.slice(raw.indexOf('://') + 3).split(/[/?#]/, 1)[0];
  const at = authority.lastIndexOf('@');
  if (at < 0) return;
  try {
    for (const part of authority.slice(0, at).split(':')) decodeURIComponent(part);
  } catch {
    throw new ConfigurationError('SWITCHYARD_RELAY_URL: the user or password is not percent-encoded correctly (a "%" must start an escape such as %25)');
  }
}

/**
 * A part of the URL the transport would not use is refused rather than dropped (a setting that does nothing):
 * the relay's Kafka client is plaintext without SASL, so credentials in a `kafka://` URL would go unused and a
 * secured cluster would only ever look unavailable; NATS and Kafka URLs name servers, nothing after them. An
 * `amqp://` URL's path is its vhost.
 */
function checkNothingIgnored(raw: string, transport: RelayTransport): void {
  const rest = raw.slice(raw.indexOf('://') + 3);
  const authority = rest.split(/[/?#]/, 1)[0];
  // An "@" after the authority's end: a user or password holding an unencoded "/", "?" or "#" (nothing of it quoted).
  if (rest.slice(authority.length).includes('@')) {
    throw new ConfigurationError('SWITCHYARD_RELAY_URL: the user or password must be percent-encoded ("/" as %2F, "?" as %3F, "#" as %23, "@" as %40)');
  }
  // Several servers are host:port pairs after one scheme; a second scheme would read as a path.
  if (/,\s*[a-z][a-z0-9+.-]*:\/\//i.test(rest)) {
    throw new ConfigurationError(`SWITCHYARD_RELAY_URL: name several servers after one scheme, comma-separated (${transport}://host1:port,host2:port)`);
  }
  if (transport === 'kafka' && authority.includes('@')) {
    throw new ConfigurationError('SWITCHYARD_RELAY_URL: a kafka:// URL takes no user or password — the relay connects to Kafka without SASL or TLS (docs/events-out.md)');
  }
  const after = rest.slice(authority.length);
  if (transport !== 'amqp' && after !== '' && after !== '/') {
    // Only what kind of part it is: the rest of the URL is the user's to read, and may hold a token.
    throw new ConfigurationError(`SWITCHYARD_RELAY_URL: a ${transport}:// URL names its servers only; the ${after[0] === '/' ? 'path' : after[0] === '?' ? 'query' : 'fragment'} after them would be ignored`);
  }
}

/** `host:port` of each server in the URL; checked here so a typo stops the start rather than every publish. */
function serversOf(raw: string, transport: RelayTransport): string[] {
  const rest = raw.slice(raw.indexOf('://') + 3);
  const authority = rest.split(/[/?#]/, 1)[0];
  const hosts = authority.slice(authority.lastIndexOf('@') + 1).split(',').map((host) => host.trim());
  if (transport === 'amqp' && hosts.length !== 1) throw new ConfigurationError('SWITCHYARD_RELAY_URL: an amqp:// URL names one broker');
  for (const host of hosts) {
    let url: URL;
    try {
      url = new URL(`${transport === 'amqp' ? 'amqp' : 'tcp'}://${host}`);
    } catch {
      throw new ConfigurationError(`SWITCHYARD_RELAY_URL: "${host}" is not a host:port`);
    }
    if (!url.hostname) throw new ConfigurationError(`SWITCHYARD_RELAY_URL: "${host}" names no host`);
    if (transport === 'kafka' && !url.port) throw new ConfigurationError(`SWITCHYARD_RELAY_URL: Kafka broker "${host}" needs a port (host:9092)`);
  }
  return hosts;
}

function readEvents(value: string | undefined): { events: EventTypeFilter; description: string } {
  const names = (value ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (names.length === 0 || names.includes('all')) return { events: ALL_EVENT_TYPES, description: 'all' };
  const types = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const family = RELAY_EVENT_FAMILIES[name];
    if (family) family.forEach((type) => types.add(type));
    else if (RELAYABLE_EVENT_TYPES.includes(name)) types.add(name);
    else unknown.push(name);
  }
  if (unknown.length > 0) {
    throw new ConfigurationError(
      `SWITCHYARD_RELAY_EVENTS names ${unknown.map((name) => `"${name}"`).join(', ')}, neither an event type nor a family ` +
        `(families: ${Object.keys(RELAY_EVENT_FAMILIES).join(', ')}; each family's types: docs/events-out.md "Event families")`,
    );
  }
  return { events: [...types], description: names.join(',') };
}
