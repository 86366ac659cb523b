/**
 * Node-wide admission limits (environment variables; per-key and per-tenant limits come from their
 * `limits.maxConcurrency`). Streams hold a request slot and a stream slot, so the stream limit also
 * reserves the difference for short buffered calls: a stream flood cannot starve them.
 */
export interface AdmissionSettings {
  /** Requests in flight on this node, streams included; null = unlimited. */
  maxConcurrentRequests: number | null;
  /** Streams in flight on this node; null = unlimited. */
  maxConcurrentStreams: number | null;
  /** Requests that may wait for a global slot; 0 (the default) = fail fast, no hidden queue. */
  queueDepth: number;
  /** Longest wait in that queue. */
  queueWaitMs: number;
}

export const DEFAULT_ADMISSION: AdmissionSettings = Object.freeze({
  maxConcurrentRequests: 1024,
  maxConcurrentStreams: 512,
  queueDepth: 0,
  queueWaitMs: 0,
});

export function resolveAdmission(overrides: Partial<AdmissionSettings> | undefined): AdmissionSettings {
  return { ...DEFAULT_ADMISSION, ...overrides };
}
