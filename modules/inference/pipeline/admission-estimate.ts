import { type ChatRequest, estimateInputTokens } from '../../canonical/index.js';
import type { ResolvedAlias, ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';

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

/**
 * The request as one deployment is sent it: an output cap above the deployment's `maxOutputTokens` is lowered to it
 * (docs/api.md: the output asked for is capped at the route's `maxOutputTokens`). No deployment can produce more,
 * and a provider refuses a cap above its model's (OpenAI "max_tokens is too large", Anthropic likewise).
 */
export function cappedForDeployment(request: ChatRequest, deployment: ResolvedDeployment): ChatRequest {
  if (request.maxOutputTokens === null || request.maxOutputTokens <= deployment.maxOutputTokens) return request;
  // eslint-disable-next-line no-restricted-syntax -- an override: maxOutputTokens is on every ChatRequest
  return { ...request, maxOutputTokens: deployment.maxOutputTokens };
}

/**
 * What admission reserves once the alias is known: no choice is reserved more output than the alias's largest route
 * can produce (a `max_tokens` of a billion reserved a billion tokens against the rate limits and the budget, and
 * a budgeted key was refused for a cost no route could reach).
 */
export function reservationForAlias<R extends { reservedOutputTokens: number; outputTokensPerChoice?: number }>(intent: R, alias: ResolvedAlias): R {
  const perChoice = intent.outputTokensPerChoice ?? intent.reservedOutputTokens;
  const largest = Math.max(0, ...alias.routes.map((route) => route.deployment.maxOutputTokens));
  if (largest <= 0 || perChoice <= largest) return intent;
  const choices = Math.max(1, Math.round(intent.reservedOutputTokens / perChoice));
  return Object.assign({}, intent, { outputTokensPerChoice: largest, reservedOutputTokens: choices * largest });
}
