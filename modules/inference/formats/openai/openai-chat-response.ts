import type { TokenUsage } from '../../../../events/index.js';
import type { ChatResponse } from '../../../canonical/index.js';
import { type OpenAiChatCompletion, usageToOpenAi } from '../../../providers/index.js';
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
          ? { tool_calls: choice.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
          : {}),
        refusal: null,
      },
      finish_reason: choice.stopReason,
      logprobs: null,
    })),
    usage: usageToOpenAi(usage),
    system_fingerprint: null,
  };
}
