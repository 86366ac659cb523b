import type { TokenUsage } from '../../../events/index.js';
import type { StopReason, TokenLogprob } from '../../canonical/index.js';
import type { OpenAiTokenLogprob, OpenAiUsage } from './openai-wire.js';

export function usageFromOpenAi(usage: OpenAiUsage): TokenUsage {
  return {
    input: usage.prompt_tokens ?? 0,
    cachedInput: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    output: usage.completion_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
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
