import type { TokenUsage } from '../../../events/index.js';
import type { StopReason } from '../../canonical/index.js';
import type { GeminiUsageMetadata } from './gemini-wire.js';

/**
 * Gemini counts thinking apart from the visible answer (`thoughtsTokenCount` is not part of
 * `candidatesTokenCount`) and bills both as output; the canonical `output` includes reasoning, so it is
 * their sum. `promptTokenCount` already includes cached content, which canonical `input` does too.
 */
export function usageFromGemini(usage: GeminiUsageMetadata): TokenUsage {
  const thoughts = count(usage.thoughtsTokenCount);
  return {
    input: count(usage.promptTokenCount) + count(usage.toolUsePromptTokenCount),
    cachedInput: count(usage.cachedContentTokenCount),
    cacheWrite: 0,
    output: count(usage.candidatesTokenCount) + thoughts,
    reasoning: thoughts,
  };
}

/** Why a candidate stopped. A candidate that called functions stopped to have them run. */
export function stopReasonFromGemini(reason: string | undefined, calledFunctions: boolean): StopReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    default:
      return calledFunctions ? 'tool_calls' : 'stop';
  }
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
