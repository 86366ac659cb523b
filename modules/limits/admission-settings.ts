import { ConfigurationError, type SettingDeclaration, type SettingsEnv, declareSettings, definedOnly, integerSetting } from '../../src/kernel/index.js';

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

/** DI token of this node's resolved admission settings. */
export const ADMISSION_SETTINGS = Symbol('ADMISSION_SETTINGS');

/** The variables readAdmissionOverrides reads; the defaults shown are DEFAULT_ADMISSION's. */
export const ADMISSION_ENVIRONMENT = declareSettings('modules/limits', {
  SWITCHYARD_MAX_CONCURRENT_REQUESTS: {
    type: 'integer ≥ 0',
    default: `\`${DEFAULT_ADMISSION.maxConcurrentRequests}\``,
    meaning: 'requests in flight on this node, streams included; `0` = unlimited. Over it: 503 `overloaded`',
  },
  SWITCHYARD_MAX_CONCURRENT_STREAMS: {
    type: 'integer ≥ 0',
    default: `\`${DEFAULT_ADMISSION.maxConcurrentStreams}\``,
    meaning: 'streams in flight on this node; `0` = unlimited. Streams hold a request slot too, so this also keeps room for short buffered calls',
  },
  SWITCHYARD_ADMISSION_QUEUE_DEPTH: {
    type: 'integer ≥ 0',
    default: `\`${DEFAULT_ADMISSION.queueDepth}\` (fail fast, no hidden queue)`,
    meaning: 'requests that may wait for a node-wide slot; needs SWITCHYARD_ADMISSION_QUEUE_WAIT_MS',
  },
  SWITCHYARD_ADMISSION_QUEUE_WAIT_MS: {
    type: 'integer ≥ 0 (ms)',
    default: `\`${DEFAULT_ADMISSION.queueWaitMs}\``,
    meaning: 'longest wait in that queue',
  },
});

/** Only the variables that are set; 0 means unlimited for the concurrency limits. */
export function readAdmissionOverrides(env: SettingsEnv): Partial<AdmissionSettings> {
  const limit = (setting: SettingDeclaration) => {
    const value = integerSetting(env, setting);
    return value === 0 ? null : value;
  };
  const queueDepth = integerSetting(env, ADMISSION_ENVIRONMENT.SWITCHYARD_ADMISSION_QUEUE_DEPTH);
  const queueWaitMs = integerSetting(env, ADMISSION_ENVIRONMENT.SWITCHYARD_ADMISSION_QUEUE_WAIT_MS);
  if (queueDepth && !queueWaitMs) {
    throw new ConfigurationError('SWITCHYARD_ADMISSION_QUEUE_DEPTH needs a positive SWITCHYARD_ADMISSION_QUEUE_WAIT_MS (a queue without a wait deadline is unbounded)');
  }
  return definedOnly({
    maxConcurrentRequests: limit(ADMISSION_ENVIRONMENT.SWITCHYARD_MAX_CONCURRENT_REQUESTS),
    maxConcurrentStreams: limit(ADMISSION_ENVIRONMENT.SWITCHYARD_MAX_CONCURRENT_STREAMS),
    queueDepth,
    queueWaitMs,
  });
}
