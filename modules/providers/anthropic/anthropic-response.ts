import { type ChatChoice, type ChatResponse, ProviderError, type ReasoningPart, type ToolCall } from '../../canonical/index.js';
import { matchedStopSequence, stopReasonFromAnthropic, usageFromAnthropic } from './anthropic-usage.js';
import type { AnthropicResponseMessage } from './anthropic-wire.js';

/**
 * Anthropic `message` JSON → canonical response. Text blocks are concatenated, tool_use blocks become
 * tool calls (input re-serialised as JSON text), thinking and redacted_thinking blocks reasoning parts
 * (signatures kept); server-tool blocks have no canonical place and are not relayed. A body that is not a message is malformed.
 */
export function fromAnthropicMessage(body: unknown): ChatResponse {
  const message = body as AnthropicResponseMessage;
  if (!message || typeof message !== 'object' || (message.type !== undefined && message.type !== 'message') || !Array.isArray(message.content)) {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not a message');
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const block of message.content) {
    if (block?.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block?.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning.push({ type: 'thinking', text: block.thinking, signature: typeof block.signature === 'string' ? block.signature : null });
    } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') reasoning.push({ type: 'redacted_thinking', data: block.data });
    else if (block?.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') {
        throw new ProviderError('malformed_response', 'the provider returned a tool_use block without id or name');
      }
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  const choice: ChatChoice = { index: 0, text, toolCalls, stopReason: stopReasonFromAnthropic(message.stop_reason), reasoning, logprobs: null };
  const stopSequence = matchedStopSequence(message.stop_reason, message.stop_sequence);
  if (stopSequence !== undefined) choice.stopSequence = stopSequence;
  return {
    providerRequestId: typeof message.id === 'string' ? message.id : null,
    choices: [choice],
    usage: message.usage && typeof message.usage === 'object' ? usageFromAnthropic(message.usage) : null,
  };
}
