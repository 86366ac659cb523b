import { type ReportedUsage, type StopReason, reportedField } from '../../canonical/index.js';
import type { ConverseUsage } from './bedrock-wire.js';

/**
 * Bedrock reports `inputTokens` without the cache reads and writes; the canonical `input` includes
 * them (TokenUsage), so pricing can split the input into plain, cached and cache-write tokens.
 */
export function usageFromConverse(usage: Partial<ConverseUsage>): ReportedUsage {
  const cacheRead = reportedField('cacheReadInputTokens', usage.cacheReadInputTokens);
  const cacheWrite = reportedField('cacheWriteInputTokens', usage.cacheWriteInputTokens);
  return {
    input: [reportedField('inputTokens', usage.inputTokens, true), cacheRead, cacheWrite],
    cachedInput: [cacheRead],
    cacheWrite: [cacheWrite],
    output: [reportedField('outputTokens', usage.outputTokens, true)],
    reasoning: [], // Bedrock does not report reasoning tokens apart from output tokens
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

/** The stop sequence Claude on Bedrock names (additionalModelResponseFields.stop_sequence), with stopReason `stop_sequence` only. */
export function matchedStopSequenceFromConverse(reason: unknown, additional: unknown): string | undefined {
  if (reason !== 'stop_sequence' || typeof additional !== 'object' || additional === null) return undefined;
  const sequence = (additional as { stop_sequence?: unknown }).stop_sequence;
  return typeof sequence === 'string' ? sequence : undefined;
}
