import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { type SettingDeclaration, type SettingsEnv, declareSettings, inlineCode, textSetting } from '../../src/kernel/index.js';

/** Which traces are kept (OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, the OpenTelemetry names). */
export interface SamplerSettings {
  kind: 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';
  /** For the ratio samplers, 0…1. */
  ratio: number;
}

/** Everything observability reads from the environment; each knob has one default. */
export interface ObservabilitySettings {
  /**
   * Who may read `/metrics`: `admin` (the default: the admin token, or a key with the `admin:platform`
   * scope; the metrics span every tenant, so a tenant's `admin` key is refused) or `open` (anyone who
   * reaches the port; only where the port is not exposed beyond the scraper).
   */
  metricsAccess: 'admin' | 'open';
  /** One JSON line per request on stdout (SWITCHYARD_REQUEST_LOG=off turns it off). */
  requestLog: boolean;
  /** Tenants whose prompts and completions are logged, redacted (SWITCHYARD_LOG_CONTENT_TENANTS, comma-separated; `*` = all). */
  contentLogTenants: ReadonlySet<string>;
  /** OTLP/HTTP traces go here when set (OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). */
  otlpEndpoint: string | null;
  sampler: SamplerSettings;
  /** OTEL_SERVICE_NAME, default `switchyard`. */
  serviceName: string;
  /** How long a SIGTERM waits for in-flight requests and streams (SWITCHYARD_SHUTDOWN_DEADLINE_MS, default 30 s). */
  shutdownDeadlineMs: number;
  /** An in-memory projection further behind than this makes the node unready (SWITCHYARD_READY_MAX_LAG_EVENTS, default 1000). */
  readyMaxLagEvents: number;
  /** Programmatic only (tests, embedding): spans go to this exporter, whatever the environment says. */
  spanExporter?: SpanExporter;
}

/** What a caller embedding the gateway (tests) may set instead of the environment: settings, and where request log lines go. */
export type ObservabilityOverrides = Partial<ObservabilitySettings> & { requestLogDestination?: { write(line: string): void } };

/** DI token of the observability context's settings. */
export const OBSERVABILITY_SETTINGS = Symbol('OBSERVABILITY_SETTINGS');

/** The context's settings as the bootstrap resolves them: the knobs above and what it shares with the node. */
export interface ObservabilityContext {
  settings: ObservabilitySettings;
  /** LOG_LEVEL: the request log's threshold follows it. */
  logLevel: 'error' | 'warn' | 'log' | 'debug';
  /** SWITCHYARD_NODE_ID (default host:pid): `GET /admin/v1/status` names the node it answers for. */
  nodeId: string;
  requestLogDestination?: { write(line: string): void };
}

/**
 * The defaults with what the bootstrap read from the environment (or a caller embedding the gateway set)
 * on top. The environment itself is read once, by the bootstrap, through readObservabilitySettings.
 */
export function resolveObservability(overrides: ObservabilityOverrides = {}): Pick<ObservabilityContext, 'settings' | 'requestLogDestination'> {
  const { requestLogDestination, ...settings } = overrides;
  return { settings: { ...readObservabilitySettings({}), ...settings }, requestLogDestination };
}

export class ObservabilitySettingsError extends Error {
  override readonly name = 'ObservabilitySettingsError';
}

const SAMPLERS: readonly SamplerSettings['kind'][] = [
  'always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio',
];

const DEFAULT_SAMPLER: SamplerSettings['kind'] = 'parentbased_always_on';
const DEFAULT_SHUTDOWN_DEADLINE_MS = 30_000;
const DEFAULT_READY_MAX_LAG_EVENTS = 1_000;
const DEFAULT_SERVICE_NAME = 'switchyard';

/** The variables readObservabilitySettings reads (OpenTelemetry's own names where it has one). */
export const OBSERVABILITY_ENVIRONMENT = declareSettings('modules/observability', {
  SWITCHYARD_REQUEST_LOG: {
    type: '`on` | `off`',
    default: '`on`',
    meaning: 'one JSON line per request on stdout; `off` turns it off',
  },
  SWITCHYARD_LOG_CONTENT_TENANTS: {
    type: 'comma-separated tenant ids, or `*`',
    default: 'unset: nobody',
    meaning: 'tenants (`*` = all) whose prompts and completions are added to their request lines, redacted',
  },
  SWITCHYARD_METRICS_ACCESS: {
    type: '`admin` | `open`',
    default: '`admin`',
    meaning:
      'who may read `/metrics`: `admin` (the admin token or a key with the `admin:platform` scope; the metrics span every tenant, so a key with `admin` alone gets 403 `platform_scope_required`) ' +
      'or `open` (anyone who reaches the port; only where the port is not exposed beyond the scraper)',
  },
  SWITCHYARD_READY_MAX_LAG_EVENTS: {
    type: 'integer ≥ 0 (events)',
    default: `\`${DEFAULT_READY_MAX_LAG_EVENTS}\``,
    meaning: '`/readyz` fails when the routing snapshot or key index is further behind the log than this',
  },
  SWITCHYARD_SHUTDOWN_DEADLINE_MS: {
    type: 'integer ≥ 0 (ms)',
    default: `\`${DEFAULT_SHUTDOWN_DEADLINE_MS}\``,
    meaning: 'how long SIGTERM waits for requests and streams in flight',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    type: 'URL',
    default: 'unset: no export',
    meaning: 'OTLP/HTTP collector for traces; `/v1/traces` is appended',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    type: 'URL',
    default: 'unset: OTEL_EXPORTER_OTLP_ENDPOINT',
    meaning: 'OTLP/HTTP traces endpoint, used as is (wins over OTEL_EXPORTER_OTLP_ENDPOINT)',
  },
  OTEL_TRACES_SAMPLER: {
    type: SAMPLERS.map(inlineCode).join(' | '),
    default: `\`${DEFAULT_SAMPLER}\``,
    meaning: 'which traces are kept (the OpenTelemetry sampler names)',
  },
  OTEL_TRACES_SAMPLER_ARG: {
    type: 'number from 0 to 1',
    default: '`1`',
    meaning: 'the ratio of the ratio samplers',
  },
  OTEL_SERVICE_NAME: {
    type: 'text',
    default: `\`${DEFAULT_SERVICE_NAME}\``,
    meaning: "the traces' `service.name`",
  },
});

export function readObservabilitySettings(env: SettingsEnv): ObservabilitySettings {
  const read = (setting: SettingDeclaration) => textSetting(env, setting);
  const settings = OBSERVABILITY_ENVIRONMENT;
  const access = (read(settings.SWITCHYARD_METRICS_ACCESS) || 'admin').toLowerCase();
  if (access !== 'admin' && access !== 'open') throw new ObservabilitySettingsError('SWITCHYARD_METRICS_ACCESS must be admin or open');
  const requestLog = (read(settings.SWITCHYARD_REQUEST_LOG) || 'on').toLowerCase();
  if (!['on', 'off'].includes(requestLog)) throw new ObservabilitySettingsError('SWITCHYARD_REQUEST_LOG must be on or off');
  const kind = (read(settings.OTEL_TRACES_SAMPLER) || DEFAULT_SAMPLER).toLowerCase() as SamplerSettings['kind'];
  if (!SAMPLERS.includes(kind)) throw new ObservabilitySettingsError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}`);
  const ratioText = read(settings.OTEL_TRACES_SAMPLER_ARG);
  const ratio = ratioText === undefined || ratioText === '' ? 1 : Number(ratioText);
  if (!(ratio >= 0 && ratio <= 1)) throw new ObservabilitySettingsError('OTEL_TRACES_SAMPLER_ARG must be a number between 0 and 1');
  const deadlineText = read(settings.SWITCHYARD_SHUTDOWN_DEADLINE_MS);
  const shutdownDeadlineMs = deadlineText === undefined || deadlineText === '' ? DEFAULT_SHUTDOWN_DEADLINE_MS : Number(deadlineText);
  if (!Number.isInteger(shutdownDeadlineMs) || shutdownDeadlineMs < 0) {
    throw new ObservabilitySettingsError('SWITCHYARD_SHUTDOWN_DEADLINE_MS must be a non-negative integer');
  }
  const lagText = read(settings.SWITCHYARD_READY_MAX_LAG_EVENTS);
  const readyMaxLagEvents = lagText === undefined || lagText === '' ? DEFAULT_READY_MAX_LAG_EVENTS : Number(lagText);
  if (!Number.isInteger(readyMaxLagEvents) || readyMaxLagEvents < 0) {
    throw new ObservabilitySettingsError('SWITCHYARD_READY_MAX_LAG_EVENTS must be a non-negative integer');
  }
  const traces = read(settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || null;
  const base = read(settings.OTEL_EXPORTER_OTLP_ENDPOINT) || null;
  return {
    metricsAccess: access,
    requestLog: requestLog === 'on',
    contentLogTenants: new Set((read(settings.SWITCHYARD_LOG_CONTENT_TENANTS) ?? '').split(',').map((t) => t.trim()).filter(Boolean)),
    // The signal-specific variable is used as is; the base one gets the traces path (as the OTLP exporters do).
    otlpEndpoint: traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null),
    sampler: { kind, ratio },
    serviceName: read(settings.OTEL_SERVICE_NAME) || DEFAULT_SERVICE_NAME,
    shutdownDeadlineMs,
    readyMaxLagEvents,
  };
}
