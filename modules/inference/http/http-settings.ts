import { ConfigurationError, type SettingDeclaration, type SettingsEnv, declareSettings, definedOnly, positiveIntegerSetting } from '../../../src/kernel/index.js';

/**
 * Bounds on the gateway's client connections (DESIGN §10). Without them an unfinished body or a silent
 * connection holds a file descriptor for minutes, and enough of them stop the node from accepting
 * anyone.
 */
export interface HttpSettings {
  /** Most time from a connection's opening (or a request's first byte) to the end of its headers. */
  headersTimeoutMs: number;
  /** Most time to receive a whole request, headers and body; answered with 408 and the connection closed. */
  bodyTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between two requests. */
  keepAliveTimeoutMs: number;
  /** Most client connections open at once; a connection beyond it is closed as soon as it is accepted. */
  maxConnections: number;
}

export const DEFAULT_HTTP_SETTINGS: HttpSettings = Object.freeze({
  headersTimeoutMs: 10_000,
  // A 4 MiB body at 1 Mbit/s takes 32 s.
  bodyTimeoutMs: 60_000,
  // Longer than the 60 s idle timeout of common load balancers, so the balancer closes first and never
  // sends a request on a connection the gateway is closing.
  keepAliveTimeoutMs: 65_000,
  // Each served request may also hold one upstream connection: keep this below half of `ulimit -n`.
  maxConnections: 8_192,
});

export function httpSettings(overrides: Partial<HttpSettings> = {}): HttpSettings {
  const settings = { ...DEFAULT_HTTP_SETTINGS, ...overrides };
  if (settings.headersTimeoutMs > settings.bodyTimeoutMs) {
    throw new RangeError('the headers timeout must not exceed the body timeout (the body timeout covers the headers too)');
  }
  return settings;
}

/**
 * How often Node looks for requests past the headers or body timeout: the timeouts are enforced to within
 * this interval (Node's own default of 30 s would let a 10 s timeout run to 40 s).
 */
export function timeoutCheckIntervalMs(settings: HttpSettings): number {
  return Math.max(25, Math.min(1_000, Math.floor(Math.min(settings.headersTimeoutMs, settings.bodyTimeoutMs) / 10)));
}

/** The variables readHttpOverrides reads; the defaults shown are DEFAULT_HTTP_SETTINGS'. */
export const HTTP_ENVIRONMENT = declareSettings('modules/inference/http', {
  SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS: {
    type: 'integer > 0 (ms)',
    default: `\`${DEFAULT_HTTP_SETTINGS.headersTimeoutMs}\``,
    meaning: "from a connection's opening (or a request's first byte) to the end of its headers; also closes connections that send nothing. Past it: 408 and the connection closed",
  },
  SWITCHYARD_HTTP_BODY_TIMEOUT_MS: {
    type: 'integer > 0 (ms)',
    default: `\`${DEFAULT_HTTP_SETTINGS.bodyTimeoutMs}\``,
    meaning: 'to receive a whole request, headers and body (at least the headers timeout). Past it: 408 and the connection closed',
  },
  SWITCHYARD_HTTP_KEEPALIVE_TIMEOUT_MS: {
    type: 'integer > 0 (ms)',
    default: `\`${DEFAULT_HTTP_SETTINGS.keepAliveTimeoutMs}\``,
    meaning: 'an idle keep-alive connection between requests (longer than the 60 s of common load balancers, so the balancer closes first)',
  },
  SWITCHYARD_HTTP_MAX_CONNECTIONS: {
    type: 'integer > 0',
    default: `\`${DEFAULT_HTTP_SETTINGS.maxConnections}\``,
    meaning: 'client connections open at once; one beyond it is closed as soon as it is accepted. Keep it below half of `ulimit -n`: a served request may hold an upstream connection too',
  },
});

/** Only the variables that are set; each must be a positive integer (none of these bounds can be switched off). */
export function readHttpOverrides(env: SettingsEnv): Partial<HttpSettings> {
  const positive = (setting: SettingDeclaration) => positiveIntegerSetting(env, setting);
  const http = definedOnly({
    headersTimeoutMs: positive(HTTP_ENVIRONMENT.SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS),
    bodyTimeoutMs: positive(HTTP_ENVIRONMENT.SWITCHYARD_HTTP_BODY_TIMEOUT_MS),
    keepAliveTimeoutMs: positive(HTTP_ENVIRONMENT.SWITCHYARD_HTTP_KEEPALIVE_TIMEOUT_MS),
    maxConnections: positive(HTTP_ENVIRONMENT.SWITCHYARD_HTTP_MAX_CONNECTIONS),
  });
  const headers = http.headersTimeoutMs ?? DEFAULT_HTTP_SETTINGS.headersTimeoutMs;
  const body = http.bodyTimeoutMs ?? DEFAULT_HTTP_SETTINGS.bodyTimeoutMs;
  if (headers > body) {
    throw new ConfigurationError(`SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS (${headers}) must not exceed SWITCHYARD_HTTP_BODY_TIMEOUT_MS (${body}): the body timeout covers the headers too`);
  }
  return http;
}
