import type { ChatRequest, EmbeddingsRequest, UsageBound } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';

/** Slack on every bound, so that a provider's own count of a tiny request is never doubted. */
const BOUND_MARGIN_TOKENS = 1024;

/**
 * The most one chat attempt on `deployment` can plausibly use (checkReportedUsage holds a provider to it):
 * - input: the deployment's context window, or twice the gateway's estimate when that is larger
 *   (another tokenizer, images), plus a margin;
 * - output: per choice, the larger of the requested cap, the deployment's maximum output and a requested
 *   thinking budget — twice over, for providers that count reasoning beside the visible answer — plus
 *   a margin, times `n`.
 * A wrong catalog entry (a context window or maximum output set too low) makes true counts look
 * implausible: they are then billed at the gateway's own count, and the metric and log line say so.
 */
export function chatUsageBound(request: ChatRequest, deployment: ResolvedDeployment, estimatedInputTokens: number): UsageBound {
  const perChoice = Math.max(request.maxOutputTokens ?? 0, deployment.maxOutputTokens, request.reasoning?.budgetTokens ?? 0);
  return {
    input: Math.max(deployment.contextWindow, 2 * estimatedInputTokens) + BOUND_MARGIN_TOKENS,
    output: Math.max(1, request.n) * (2 * perChoice + BOUND_MARGIN_TOKENS),
  };
}

/** Embeddings: every input within the context window (or twice the estimate), plus a margin; no output. */
export function embeddingsUsageBound(request: EmbeddingsRequest, deployment: ResolvedDeployment, estimatedInputTokens: number): UsageBound {
  return { input: Math.max(request.inputs.length * deployment.contextWindow, 2 * estimatedInputTokens) + BOUND_MARGIN_TOKENS, output: 0 };
}

/** What an attempt's usage is checked against: the bound, and the gateway's estimate of the input to bill instead. */
export interface UsageTerms {
  estimatedInputTokens: number;
  bound: UsageBound;
}
