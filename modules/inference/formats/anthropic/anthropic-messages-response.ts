import type { TokenUsage } from '../../../../events/index.js';
import { type ChatResponse, clientToolCallId, type ToolCall, toolInputForClient } from '../../../canonical/index.js';
import { type AnthropicContentBlock, type AnthropicResponseMessage, stopReasonToAnthropic, usageToAnthropic } from '../../../providers/index.js';
import type { ResponseIdentity } from '../client-format.js';

/** Canonical response → Anthropic `message` (one choice: the Messages API has no `n`). */
export function toAnthropicMessage(response: ChatResponse, identity: ResponseIdentity, usage: TokenUsage): AnthropicResponseMessage {
  const choice = response.choices[0];
  const content: AnthropicContentBlock[] = [];
  // Thinking first, as Anthropic orders it; an unsigned thought (another provider's) gets an empty signature.
  for (const part of choice?.reasoning ?? []) {
    content.push(part.type === 'thinking' ? { type: 'thinking', thinking: part.text, signature: part.signature ?? '' } : { type: 'redacted_thinking', data: part.data });
  }
  if (choice?.text) content.push({ type: 'text', text: choice.text });
  for (const call of choice?.toolCalls ?? []) content.push({ type: 'tool_use', id: clientToolCallId(call.id, call.signature), name: call.name, input: toolInput(call) });
  return {
    id: identity.id,
    type: 'message',
    role: 'assistant',
    model: identity.model,
    content,
    stop_reason: stopReasonToAnthropic(choice?.stopReason ?? 'stop', choice?.stopSequence),
    stop_sequence: choice?.stopReason === 'stop' ? (choice.stopSequence ?? null) : null,
    usage: usageToAnthropic(usage),
  };
}

/** Anthropic clients expect `input` as an object (see toolInputForClient: anything else is wrapped as `{"_raw": …}`). */
export function toolInput(call: ToolCall): Record<string, unknown> {
  return toolInputForClient(call.arguments);
}
