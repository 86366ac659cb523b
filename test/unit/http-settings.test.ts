import { ConfigurationError, readEnvironment } from '../../src/config/environment.js';
import { DEFAULT_HTTP_SETTINGS, httpSettings, timeoutCheckIntervalMs } from '../../modules/inference/http/http-settings.js';

describe('client connection settings from the environment', () => {
  test('unset variables keep the production defaults', () => {
    expect(httpSettings(readEnvironment({}).http)).toEqual(DEFAULT_HTTP_SETTINGS);
    expect(DEFAULT_HTTP_SETTINGS).toEqual({ headersTimeoutMs: 10_000, bodyTimeoutMs: 60_000, keepAliveTimeoutMs: 65_000, maxConnections: 8_192 });
  });

  test('each variable sets its bound', () => {
    const environment = readEnvironment({
      SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS: '2000',
      SWITCHYARD_HTTP_BODY_TIMEOUT_MS: '15000',
      SWITCHYARD_HTTP_KEEPALIVE_TIMEOUT_MS: '5000',
      SWITCHYARD_HTTP_MAX_CONNECTIONS: '1000',
    });
    expect(httpSettings(environment.http)).toEqual({ headersTimeoutMs: 2_000, bodyTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000 });
  });

  test.each([
    ['SWITCHYARD_HTTP_BODY_TIMEOUT_MS', '0'],
    ['SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS', '-5'],
    ['SWITCHYARD_HTTP_KEEPALIVE_TIMEOUT_MS', '1.5'],
    ['SWITCHYARD_HTTP_MAX_CONNECTIONS', 'many'],
    // The body timeout covers the headers: a shorter one would make the headers timeout meaningless.
    ['SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS', '120000'],
  ])('%s=%s is refused at start', (name, value) => {
    expect(() => readEnvironment({ [name]: value })).toThrow(ConfigurationError);
  });

  test('timeouts are checked often enough to hold them to a tenth of the shortest', () => {
    expect(timeoutCheckIntervalMs(DEFAULT_HTTP_SETTINGS)).toBe(1_000);
    expect(timeoutCheckIntervalMs({ ...DEFAULT_HTTP_SETTINGS, headersTimeoutMs: 500, bodyTimeoutMs: 1_000 })).toBe(50);
  });
});
