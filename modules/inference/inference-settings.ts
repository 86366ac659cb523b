import type { DocumentLimits } from '../canonical/index.js';
import type { DurabilityProfile } from './pipeline/durability.js';
import type { ResilienceSettings } from './resilience/resilience-settings.js';

/** DI token of the data plane's settings. */
export const INFERENCE_SETTINGS = Symbol('INFERENCE_SETTINGS');

/**
 * What the data plane needs from the node's configuration, resolved: its knobs are read by this
 * context's own settings files (resilience-settings.ts, durability.ts, http-settings.ts).
 */
export interface InferenceSettings {
  durability: DurabilityProfile;
  /** Recorded on breaker events, and the breaker signals' sender id. */
  nodeId: string;
  /** Cross-node breaker signals; null = breakers per node only. */
  redisUrl: string | null;
  /** SWITCHYARD_REDIS_NAMESPACE: the breaker signals' channel and set, apart from another installation's on the same Redis. */
  redisNamespace?: string;
  resilience: ResilienceSettings;
  /** Document size limits (document-settings.ts); absent: the defaults. */
  documents?: DocumentLimits;
}
