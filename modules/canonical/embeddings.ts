import type { ReportedCount } from './reported-usage.js';

/**
 * The gateway's provider-neutral embeddings request and answer. Vectors always travel as floats
 * between gateway and provider; the client format decides how to render them (floats or base64).
 */
export interface EmbeddingsRequest {
  /** The public alias the client asked for. */
  model: string;
  /** One or more texts; each gets one vector, in order. */
  inputs: string[];
  /** Requested vector length, when the client asked for a shorter one. */
  dimensions: number | null;
  /** The end user, for the provider's abuse monitoring. */
  user: string | null;
}

export interface EmbeddingsResponse {
  providerRequestId: string | null;
  /** One vector per input, in input order. */
  vectors: number[][];
  /** Input tokens the provider counted, as reported (checked by the pipeline); null when it did not say. */
  inputTokens: ReportedCount | null;
}
