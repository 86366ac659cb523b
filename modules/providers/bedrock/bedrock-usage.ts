import type { TokenUsage } from '../../../events/index.js';
import type { StopReason } from '../../canonical/index.js';
import type { ConverseUsage } from './bedrock-wire.js';

/**
 * Bedrock reports `inputTokens` without the cache reads and writes; the canonical `input` includes
 * them (TokenUsage), so pricing can split the input into plain, cached and cache-write tokens.
 */
export function usageFromConverse(usage: Partial<ConverseUsage>): TokenUsage {
  const cachedInput = count(usage.cacheReadInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  return {
    input: count(usage.inputTokens) + cachedInput + cacheWrite,
    cachedInput,
    cacheWrite,
    output: count(usage.outputTokens),
    reasoning: 0, // Bedrock does not report reasoning tokens apart from output tokens
  };
}

export function stopReasonFromConverse(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    case 'end_turn':
    case 'stop_sequence':
    default:
      return 'stop';
  }
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
