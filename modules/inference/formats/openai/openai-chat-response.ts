import type { TokenUsage } from '../../../../events/index.js';
import { type ChatResponse, clientToolCallId, type ReasoningPart } from '../../../canonical/index.js';
import { logprobsToOpenAi, type OpenAiChatCompletion, usageToOpenAi } from '../../../providers/index.js';
import type { ResponseIdentity } from '../client-format.js';


/** Canonical response → OpenAI chat.completion. */
export function toOpenAiCompletion(response: ChatResponse, identity: ResponseIdentity, usage: TokenUsage): OpenAiChatCompletion {
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: response.choices.map((choice) => ({
      index: choice.index,
      message: {
        role: 'assistant',
        content: choice.toolCalls.length && !choice.text ? null : choice.text,
        ...(choice.toolCalls.length
          ? { tool_calls: choice.toolCalls.map((call) => ({ id: clientToolCallId(call.id, call.signature), type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
          : {}),
        refusal: null,
        ...reasoningFields(choice.reasoning),
      },
      finish_reason: choice.stopReason,
      logprobs: choice.logprobs ? { content: logprobsToOpenAi(choice.logprobs), refusal: null } : null,
    })),
    usage: usageToOpenAi(usage),
    system_fingerprint: null,
  };
}

/**
 * Reasoning in Chat Completions terms: `reasoning_content` (the DeepSeek/vLLM field OpenAI-compatible
 * clients read) and, when there are signed or redacted blocks, `thinking_blocks` (LiteLLM's field), which
 * a client sends back on the assistant message so an Anthropic or Bedrock route can verify its thinking.
 */
export function reasoningFields(parts: readonly ReasoningPart[]): { reasoning_content?: string; thinking_blocks?: unknown[] } {
  if (parts.length === 0) return {};
  const text = parts.map((part) => (part.type === 'thinking' ? part.text : '')).join('');
  const signed = parts.some((part) => part.type === 'redacted_thinking' || part.signature !== null);
  return {
    reasoning_content: text,
    ...(signed
      ? {
          thinking_blocks: parts.map((part) =>
            part.type === 'thinking' ? { type: 'thinking', thinking: part.text, signature: part.signature } : { type: 'redacted_thinking', data: part.data },
          ),
        }
      : {}),
  };
}
