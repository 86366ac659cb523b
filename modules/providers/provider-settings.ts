/** DI token of the providers context's settings. */
export const PROVIDER_SETTINGS = Symbol('PROVIDER_SETTINGS');

export interface ProviderSettings {
  /**
   * The connect deadline (issue 5 §5), the one undici enforces itself. Its knob and default belong to
   * the resilience deadlines (SWITCHYARD_CONNECT_TIMEOUT_MS); the bootstrap passes the resolved value.
   */
  connectTimeoutMs: number;
}
