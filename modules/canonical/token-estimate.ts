import type { ChatRequest } from './chat-request.js';

/**
 * A tokenizer-free estimate (about four characters per token, plus per-message overhead), used to
 * reserve limits at admission and to bill when a provider reports nothing (evidence: estimated/counted).
 */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

export function estimateInputTokens(request: ChatRequest): number {
  let total = 3;
  for (const message of request.messages) {
    total += 4;
    for (const part of message.content) total += part.type === 'text' ? estimateTokens(part.text) : 765;
    if (message.role === 'assistant') for (const call of message.toolCalls) total += estimateTokens(call.name + call.arguments) + 3;
  }
  for (const tool of request.tools) total += estimateTokens(JSON.stringify(tool.parameters) + tool.name + (tool.description ?? ''));
  return total;
}
