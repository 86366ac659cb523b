import type { ReasoningEffort, ReasoningRequest } from '../../canonical/index.js';

/**
 * Effort ↔ thinking budget, one table for every provider format (the mapping LiteLLM and OpenRouter use in
 * spirit: an effort is a share of a typical answer budget). Anthropic and Bedrock need at least 1024
 * budget tokens and a budget below max_tokens; Gemini takes any budget (0 switches thinking off on Flash).
 */
export const BUDGET_OF_EFFORT: Readonly<Record<ReasoningEffort, number>> = Object.freeze({
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 24576,
});

/** Anthropic's (and Bedrock Claude's) smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/** The effort an OpenAI-format provider is asked for: the client's effort, or the band its budget falls in. */
export function effortOf(reasoning: ReasoningRequest): ReasoningEffort {
  if (reasoning.effort !== null) return reasoning.effort;
  const budget = reasoning.budgetTokens ?? BUDGET_OF_EFFORT.medium;
  if (budget <= BUDGET_OF_EFFORT.minimal) return 'minimal';
  if (budget <= BUDGET_OF_EFFORT.low) return 'low';
  if (budget <= BUDGET_OF_EFFORT.medium) return 'medium';
  return 'high';
}

/** The budget a budget-based provider is asked for: the client's budget, or the effort's. */
export function budgetOf(reasoning: ReasoningRequest): number {
  return reasoning.budgetTokens ?? BUDGET_OF_EFFORT[reasoning.effort ?? 'medium'];
}

/**
 * Anthropic-style budgets must be ≥ 1024 and below max_tokens. An effort-derived budget is shrunk to fit
 * the client's max_tokens (half of it, so an answer still fits); a budget the client named is kept as is
 * (the provider judges it). Null when no budget ≥ 1024 fits below max_tokens: the route cannot honour it.
 */
export function anthropicBudget(reasoning: ReasoningRequest, maxTokens: number): number | null {
  if (reasoning.budgetTokens !== null) return reasoning.budgetTokens;
  const wanted = BUDGET_OF_EFFORT[reasoning.effort ?? 'medium'];
  const fitted = Math.min(wanted, Math.floor(maxTokens / 2));
  return fitted >= MIN_THINKING_BUDGET ? fitted : null;
}
