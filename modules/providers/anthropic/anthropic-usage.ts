import type { TokenUsage } from '../../../events/index.js';
import { type ReportedUsage, type StopReason, reportedField } from '../../canonical/index.js';
import type { AnthropicStopReason, AnthropicUsage } from './anthropic-wire.js';

/**
 * Anthropic counts `input_tokens` *after* the cache: reads and writes are reported beside it. Canonical
 * `input` is the whole prompt (plain + cache read + cache write), so billing prices each part once.
 */
export function usageFromAnthropic(usage: AnthropicUsage): ReportedUsage {
  const cacheRead = reportedField('cache_read_input_tokens', usage.cache_read_input_tokens);
  const cacheCreation = reportedField('cache_creation_input_tokens', usage.cache_creation_input_tokens);
  return {
    input: [reportedField('input_tokens', usage.input_tokens, true), cacheRead, cacheCreation],
    cachedInput: [cacheRead],
    cacheWrite: [cacheCreation],
    output: [reportedField('output_tokens', usage.output_tokens, true)],
    reasoning: [], // Anthropic bills thinking as ordinary output and does not report it apart
  };
}

/** The inverse: canonical usage in Anthropic's terms (input_tokens excludes cached and cache-write tokens). */
export function usageToAnthropic(usage: TokenUsage): Required<AnthropicUsage> {
  const cached = Math.min(usage.cachedInput, usage.input);
  const written = Math.min(usage.cacheWrite, usage.input - cached);
  return {
    input_tokens: usage.input - cached - written,
    output_tokens: usage.output,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}

export function stopReasonFromAnthropic(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop'; // end_turn, stop_sequence, pause_turn
  }
}

/** The stop sequence Anthropic says ended the answer (only with stop_reason `stop_sequence`). */
export function matchedStopSequence(reason: unknown, sequence: unknown): string | undefined {
  return reason === 'stop_sequence' && typeof sequence === 'string' ? sequence : undefined;
}

/** Canonical `stop` with a matched sequence is Anthropic's `stop_sequence`; without one, `end_turn`. */
export function stopReasonToAnthropic(reason: StopReason, stopSequence?: string): AnthropicStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'stop':
      return stopSequence === undefined ? 'end_turn' : 'stop_sequence';
  }
}
