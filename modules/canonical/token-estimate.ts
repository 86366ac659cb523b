import type { ChatRequest } from './chat-request.js';
import { countTokens } from './tokenizer.js';

/**
 * Input tokens of a request as a real tokenizer counts them, plus the chat template's per-message
 * overhead (OpenAI's documented 3 per message + 3 for the reply primer). Used to reserve limits at
 * admission, to answer count_tokens where no provider can, and to bill when a provider reports nothing
 * (evidence: estimated). An image counts as 765 tokens (a 1024×1024 high-detail tile set).
 */
export function estimateTokens(text: string): number {
  return countTokens(text);
}

export function estimateInputTokens(request: ChatRequest): number {
  let total = 3;
  for (const message of request.messages) {
    total += 3;
    for (const part of message.content) total += part.type === 'text' ? countTokens(part.text) : 765;
    if (message.role === 'assistant') for (const call of message.toolCalls) total += countTokens(call.name) + countTokens(call.arguments) + 3;
  }
  for (const tool of request.tools) total += countTokens(tool.name) + countTokens(tool.description ?? '') + countTokens(JSON.stringify(tool.parameters)) + 8;
  return total;
}
