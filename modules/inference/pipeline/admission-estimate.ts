import { type ChatRequest, estimateInputTokens } from '../../canonical/index.js';

/** Output tokens reserved for a request that sets no output cap. */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 1024;

/** What admission reserves for a chat request. */
export interface ChatReservation {
  inputTokens: number;
  /** The output one choice may produce: the request's cap (or the default). */
  outputTokensPerChoice: number;
  /**
   * The output of the whole request: every choice may produce its cap (`n` multiplies it; the prompt is
   * counted once). What the rate limits, the budget and RequestAdmitted reserve.
   */
  outputTokens: number;
}

/**
 * What admission reserves for a chat request — the estimated input and the output cap times the
 * choices asked for — computed once, so the planner's context-window check (one choice), its cost
 * estimate, the rate limits, the budget and RequestAdmitted's record carry the same numbers. `n` is the
 * one parameter that multiplies output in the canonical model (Gemini's candidateCount is `n` upstream;
 * Anthropic and Responses clients have none).
 */
export function chatReservation(request: ChatRequest): ChatReservation {
  const outputTokensPerChoice = request.maxOutputTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS;
  return { inputTokens: estimateInputTokens(request), outputTokensPerChoice, outputTokens: Math.max(1, request.n) * outputTokensPerChoice };
}
