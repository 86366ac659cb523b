import type { ChatRequest } from './chat-request.js';
import { documentTokens } from './document.js';
import { countTokens } from './tokenizer.js';

/**
 * Input tokens of a request as a real tokenizer counts them, plus the chat template's per-message
 * overhead (OpenAI's documented 3 per message + 3 for the reply primer). Used to reserve limits at
 * admission, to answer count_tokens where no provider can, and to bill when a provider reports nothing
 * (evidence: estimated). An image counts as 765 tokens (a 1024×1024 high-detail tile set); a document as
 * documentTokens says (document.ts: 4,000 a PDF page, text as counted).
 */
export function estimateTokens(text: string): number {
  return countTokens(text);
}

/**
 * At most this many characters of one request are tokenized exactly (the tokenizer runs on the event
 * loop); the rest is counted at the ratio the exactly counted texts showed.
 */
const EXACT_CHARS_PER_REQUEST = 65_536;

class RequestTokenCounter {
  private exactChars = 0;
  private exactTokens = 0;

  count(text: string): number {
    if (text.length === 0) return 0;
    if (this.exactChars >= EXACT_CHARS_PER_REQUEST && this.exactChars > 0) {
      return Math.ceil((this.exactTokens * text.length) / this.exactChars);
    }
    const tokens = countTokens(text);
    this.exactChars += text.length;
    this.exactTokens += tokens;
    return tokens;
  }
}

export function estimateInputTokens(request: ChatRequest): number {
  const counter = new RequestTokenCounter();
  let total = 3;
  for (const message of request.messages) {
    total += 3;
    for (const part of message.content) {
      total += part.type === 'text' ? counter.count(part.text) : part.type === 'document' ? documentTokens(part, (text) => counter.count(text)) : 765;
    }
    if (message.role === 'assistant') for (const call of message.toolCalls) total += counter.count(call.name) + counter.count(call.arguments) + 3;
  }
  for (const tool of request.tools) total += counter.count(tool.name) + counter.count(tool.description ?? '') + counter.count(JSON.stringify(tool.parameters)) + 8;
  return total;
}
