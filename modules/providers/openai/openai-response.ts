import { type ChatResponse, ProviderError, type ReasoningPart } from '../../canonical/index.js';
import { logprobsFromOpenAi, stopReasonFromOpenAi, usageFromOpenAi } from './openai-usage.js';
import type { OpenAiChatCompletion } from './openai-wire.js';

/** OpenAI chat.completion JSON → canonical response. A body that is not a completion is malformed. */
export function fromOpenAiCompletion(body: unknown): ChatResponse {
  const completion = body as OpenAiChatCompletion;
  if (!completion || typeof completion !== 'object' || !Array.isArray(completion.choices)) {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not a chat completion');
  }
  return {
    providerRequestId: typeof completion.id === 'string' ? completion.id : null,
    choices: completion.choices.map((choice, position) => ({
      index: typeof choice.index === 'number' ? choice.index : position,
      text: choice.message?.content ?? '',
      toolCalls: (choice.message?.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function?.name ?? '',
        arguments: call.function?.arguments ?? '',
      })),
      stopReason: stopReasonFromOpenAi(choice.finish_reason),
      reasoning: reasoningOf(choice.message),
      logprobs: Array.isArray(choice.logprobs?.content) ? logprobsFromOpenAi(choice.logprobs.content) : null,
    })),
    usage: completion.usage ? usageFromOpenAi(completion.usage) : null,
  };
}

/** reasoning_content (vLLM, DeepSeek) or reasoning (Ollama, OpenRouter): plain text without a signature. */
function reasoningOf(message: OpenAiChatCompletion['choices'][number]['message'] | undefined): ReasoningPart[] {
  const text = message?.reasoning_content ?? message?.reasoning;
  return typeof text === 'string' && text.length > 0 ? [{ type: 'thinking', text, signature: null }] : [];
}
