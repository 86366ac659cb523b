import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

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

export function readObservabilitySettings(env: NodeJS.ProcessEnv): ObservabilitySettings {
  const access = (env.SWITCHYARD_METRICS_ACCESS || 'admin').toLowerCase();
  if (access !== 'admin' && access !== 'open') throw new ObservabilitySettingsError('SWITCHYARD_METRICS_ACCESS must be admin or open');
  const requestLog = (env.SWITCHYARD_REQUEST_LOG || 'on').toLowerCase();
  if (!['on', 'off'].includes(requestLog)) throw new ObservabilitySettingsError('SWITCHYARD_REQUEST_LOG must be on or off');
  const kind = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').toLowerCase() as SamplerSettings['kind'];
  if (!SAMPLERS.includes(kind)) throw new ObservabilitySettingsError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}`);
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = ratioText === undefined || ratioText === '' ? 1 : Number(ratioText);
  if (!(ratio >= 0 && ratio <= 1)) throw new ObservabilitySettingsError('OTEL_TRACES_SAMPLER_ARG must be a number between 0 and 1');
  const deadlineText = env.SWITCHYARD_SHUTDOWN_DEADLINE_MS;
  const shutdownDeadlineMs = deadlineText === undefined || deadlineText === '' ? 30_000 : Number(deadlineText);
  if (!Number.isInteger(shutdownDeadlineMs) || shutdownDeadlineMs < 0) {
    throw new ObservabilitySettingsError('SWITCHYARD_SHUTDOWN_DEADLINE_MS must be a non-negative integer');
  }
  const lagText = env.SWITCHYARD_READY_MAX_LAG_EVENTS;
  const readyMaxLagEvents = lagText === undefined || lagText === '' ? 1_000 : Number(lagText);
  if (!Number.isInteger(readyMaxLagEvents) || readyMaxLagEvents < 0) {
    throw new ObservabilitySettingsError('SWITCHYARD_READY_MAX_LAG_EVENTS must be a non-negative integer');
  }
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || null;
  return {
    metricsAccess: access,
    requestLog: requestLog === 'on',
    contentLogTenants: new Set((env.SWITCHYARD_LOG_CONTENT_TENANTS ?? '').split(',').map((t) => t.trim()).filter(Boolean)),
    // The signal-specific variable is used as is; the base one gets the traces path (as the OTLP exporters do).
    otlpEndpoint: traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null),
    sampler: { kind, ratio },
    serviceName: env.OTEL_SERVICE_NAME || 'switchyard',
    shutdownDeadlineMs,
    readyMaxLagEvents,
  };
}
