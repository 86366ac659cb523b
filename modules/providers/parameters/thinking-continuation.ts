import type { ChatMessage, ChatRequest } from '../../canonical/index.js';

/**
 * Whether the conversation continues a tool-use turn whose assistant message carries no signed thinking.
 *
 * Claude (Anthropic and Bedrock) verifies, with thinking on, that the assistant turn answered by the final tool
 * results starts with its signed thinking block. Clients that keep only text and tool calls (the OpenAI Agents
 * SDK, LlamaIndex, most Chat Completions and Responses clients) cannot send it back, so such a continuation
 * goes without `thinking`: the only request Claude accepts for it (a degradation, so the attempt notes it as
 * an unsent `reasoning_effort`). The thinking resumes on the next user turn.
 */
export function continuesToolUseWithoutThinking(messages: readonly ChatMessage[]): boolean {
  let index = messages.length - 1;
  if (index < 0 || messages[index].role !== 'tool') return false;
  while (index >= 0 && messages[index].role === 'tool') index--;
  const turn = messages[index];
  if (turn?.role !== 'assistant' || turn.toolCalls.length === 0) return false;
  // Unsigned thinking (another provider's) is left out of the wire body, so it does not count.
  return !(turn.reasoning ?? []).some((part) => part.type === 'redacted_thinking' || part.signature !== null);
}

/**
 * The table's unsent parameters plus `reasoning_effort` when this request's thinking is left out (above): the
 * attempt's note says the client asked for thinking that this continuation went without.
 */
export function withUnsentThinking(unsent: readonly string[], request: ChatRequest): readonly string[] {
  return request.reasoning !== null && continuesToolUseWithoutThinking(request.messages) ? [...unsent, 'reasoning_effort'] : unsent;
}
