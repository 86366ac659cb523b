import type { TokenUsage } from '../../../events/index.js';
import { type ReportedUsage, type StopReason, type TokenLogprob, reportedField } from '../../canonical/index.js';
import type { OpenAiTokenLogprob, OpenAiUsage } from './openai-wire.js';

/**
 * OpenAI's usage (also Azure OpenAI's and OpenAI-compatible servers'), as reported: `prompt_tokens`
 * includes the cached tokens and `completion_tokens` the reasoning tokens, as canonical usage does.
 * The pipeline checks it (checkReportedUsage); nothing here trusts a value.
 */
export function usageFromOpenAi(usage: OpenAiUsage): ReportedUsage {
  const prompt = detailsOf(usage.prompt_tokens_details);
  const completion = detailsOf(usage.completion_tokens_details);
  return {
    input: [reportedField('prompt_tokens', usage.prompt_tokens, true)],
    cachedInput: [reportedField('prompt_tokens_details.cached_tokens', prompt?.cached_tokens)],
    cacheWrite: [reportedField('prompt_tokens_details.cache_write_tokens', prompt?.cache_write_tokens)],
    output: [reportedField('completion_tokens', usage.completion_tokens, true)],
    reasoning: [reportedField('completion_tokens_details.reasoning_tokens', completion?.reasoning_tokens)],
  };
}

/** A details object, or nothing when the provider sent something else there. */
function detailsOf<T extends object>(details: T | null | undefined): Partial<Record<keyof T, unknown>> | null {
  return details !== null && typeof details === 'object' ? details : null;
}

export function usageToOpenAi(usage: TokenUsage): OpenAiUsage {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    // cache_write_tokens is not an OpenAI field; clients ignore it, and it is the only place a cache write shows.
    prompt_tokens_details: usage.cacheWrite > 0 ? { cached_tokens: usage.cachedInput, cache_write_tokens: usage.cacheWrite } : { cached_tokens: usage.cachedInput },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
}

export function stopReasonFromOpenAi(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export function logprobsFromOpenAi(content: readonly OpenAiTokenLogprob[]): TokenLogprob[] {
  return content.map((entry) => ({
    token: String(entry.token),
    logprob: Number(entry.logprob),
    bytes: Array.isArray(entry.bytes) ? entry.bytes : null,
    topLogprobs: (entry.top_logprobs ?? []).map((top) => ({ token: String(top.token), logprob: Number(top.logprob), bytes: Array.isArray(top.bytes) ? top.bytes : null })),
  }));
}

export function logprobsToOpenAi(content: readonly TokenLogprob[]): OpenAiTokenLogprob[] {
  return content.map((entry) => ({
    token: entry.token,
    logprob: entry.logprob,
    bytes: entry.bytes,
    top_logprobs: entry.topLogprobs.map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes })),
  }));
}
