import type { TokenUsage } from '../../events/index.js';
import type { ChatResponse } from '../canonical/index.js';

/**
 * A complete chat answer kept outside the event log (it is content): what the exact cache serves and
 * what an idempotent retry gets back. Re-encoded in the asking client's format, buffered or as SSE, so
 * one stored form serves both.
 */
export interface StoredAnswer {
  /** The request whose provider attempt produced the answer. */
  requestId: string;
  /** Unix seconds of the original response. */
  created: number;
  response: ChatResponse;
  usage: TokenUsage;
  /** The attempt that produced it, and what it cost: a cache hit records this as its saving. */
  source: { deploymentId: string; providerId: string; model: string; priceVersion: number; costUsd: string };
}

/** The bytes a stored answer occupies (its JSON), for byte-bounded stores and the entry size limit. */
export function storedBytes(answer: StoredAnswer): number {
  return Buffer.byteLength(JSON.stringify(answer));
}
