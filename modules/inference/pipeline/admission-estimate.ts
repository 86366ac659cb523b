import { type ChatRequest, estimateInputTokens } from '../../canonical/index.js';

/** Output tokens reserved for a request that sets no output cap. */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 1024;

/**
 * What admission reserves for a chat request — the estimated input and the output cap — computed once,
 * so the planner's context-window check and RequestAdmitted's record carry the same numbers.
 */
export function chatReservation(request: ChatRequest): { inputTokens: number; outputTokens: number } {
  return { inputTokens: estimateInputTokens(request), outputTokens: request.maxOutputTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS };
}
