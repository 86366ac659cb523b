import { type ReportedUsage, type StopReason, reportedField } from '../../canonical/index.js';
import type { GeminiUsageMetadata } from './gemini-wire.js';

/**
 * Gemini counts thinking apart from the visible answer (`thoughtsTokenCount` is not part of
 * `candidatesTokenCount`) and bills both as output; the canonical `output` includes reasoning, so it is
 * their sum. `promptTokenCount` already includes cached content, which canonical `input` does too.
 */
export function usageFromGemini(usage: GeminiUsageMetadata): ReportedUsage {
  const thoughts = reportedField('thoughtsTokenCount', usage.thoughtsTokenCount);
  return {
    input: [reportedField('promptTokenCount', usage.promptTokenCount, true), reportedField('toolUsePromptTokenCount', usage.toolUsePromptTokenCount)],
    cachedInput: [reportedField('cachedContentTokenCount', usage.cachedContentTokenCount)],
    cacheWrite: [],
    // Absent when nothing was generated (a blocked prompt): that is 0, not a gap.
    output: [reportedField('candidatesTokenCount', usage.candidatesTokenCount), thoughts],
    reasoning: [thoughts],
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
