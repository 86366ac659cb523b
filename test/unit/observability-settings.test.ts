import { ObservabilitySettingsError, readObservabilitySettings, resolveObservability } from '../../modules/observability/observability-settings.js';
import { ConfigurationError, readEnvironment } from '../../src/config/environment.js';

describe('readObservabilitySettings', () => {
  test('defaults: metrics behind the admin credential, request log on, no content, no exporter, parent-based sampling, 30 s shutdown', () => {
    expect(readObservabilitySettings({})).toEqual({
      metricsAccess: 'admin', requestLog: true, contentLogTenants: new Set(), otlpEndpoint: null,
      sampler: { kind: 'parentbased_always_on', ratio: 1 }, serviceName: 'switchyard', shutdownDeadlineMs: 30_000, readyMaxLagEvents: 1_000,
    });
  });

  test('every knob is read', () => {
    const settings = readObservabilitySettings({
      SWITCHYARD_METRICS_ACCESS: 'open', SWITCHYARD_REQUEST_LOG: 'off', SWITCHYARD_LOG_CONTENT_TENANTS: 'acme, globex',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_SERVICE_NAME: 'edge', SWITCHYARD_SHUTDOWN_DEADLINE_MS: '5000', SWITCHYARD_READY_MAX_LAG_EVENTS: '50',
    });
    expect(settings).toEqual({
      metricsAccess: 'open', requestLog: false, contentLogTenants: new Set(['acme', 'globex']), otlpEndpoint: 'http://collector:4318/v1/traces',
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 }, serviceName: 'edge', shutdownDeadlineMs: 5_000, readyMaxLagEvents: 50,
    });
    expect(readObservabilitySettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' }).otlpEndpoint).toBe('http://c:4318/custom');
  });

  test.each([
    [{ SWITCHYARD_METRICS_ACCESS: 'public' }, /SWITCHYARD_METRICS_ACCESS/],
    [{ SWITCHYARD_REQUEST_LOG: 'maybe' }, /SWITCHYARD_REQUEST_LOG/],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, /OTEL_TRACES_SAMPLER must be/],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG/],
    [{ SWITCHYARD_SHUTDOWN_DEADLINE_MS: '-1' }, /SWITCHYARD_SHUTDOWN_DEADLINE_MS/],
    [{ SWITCHYARD_READY_MAX_LAG_EVENTS: 'lots' }, /SWITCHYARD_READY_MAX_LAG_EVENTS/],
  ])('%j is refused', (env, message) => {
    expect(() => readObservabilitySettings(env)).toThrow(ObservabilitySettingsError);
    expect(() => readObservabilitySettings(env)).toThrow(message);
  });
});

describe('observability settings come from the environment the bootstrap read, like every context', () => {
  test('readEnvironment reads them from the variables it is given, and a bad one fails the start as a configuration error', () => {
    const environment = readEnvironment({ SWITCHYARD_DATA_DIR: ':memory:', SWITCHYARD_REQUEST_LOG: 'off', OTEL_SERVICE_NAME: 'edge' });
    expect(resolveObservability(environment.observability).settings).toMatchObject({ requestLog: false, serviceName: 'edge', metricsAccess: 'admin' });
    expect(() => readEnvironment({ SWITCHYARD_DATA_DIR: ':memory:', SWITCHYARD_METRICS_ACCESS: 'public' })).toThrow(ConfigurationError);
  });

  test('resolving them never reads the process environment behind the caller\'s back', () => {
    const saved = process.env.SWITCHYARD_METRICS_ACCESS;
    process.env.SWITCHYARD_METRICS_ACCESS = 'open';
    try {
      expect(resolveObservability({}).settings.metricsAccess).toBe('admin');
      expect(resolveObservability({ requestLog: false }).settings).toMatchObject({ requestLog: false, metricsAccess: 'admin' });
    } finally {
      if (saved === undefined) delete process.env.SWITCHYARD_METRICS_ACCESS;
      else process.env.SWITCHYARD_METRICS_ACCESS = saved;
    }
  });
});
