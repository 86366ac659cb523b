import type { ChatMessage, ChatRequest, ContentPart, DocumentPart, DocumentSource, ToolCall } from '../canonical/index.js';

/**
 * Where a piece of a request's content sits. Every client format (Chat Completions, Anthropic Messages, Responses)
 * parses into the canonical request, so one walk over it covers them all: system prompts and Anthropic `system`
 * blocks, message text and text content parts, tool results, the arguments of earlier tool calls, and predicted
 * output, and the documents whose text the gateway can read. Routing fields, model names, tool names, tool definitions (schemas and their keys) and reasoning blocks
 * are never touched — reasoning is signed by its provider and altering it would break the conversation.
 */
export type ContentPlace = 'system' | 'user' | 'assistant' | 'tool_result' | 'tool_arguments' | 'prediction' | 'document';

/** Rewrites one piece of text found at `place`; returns the text unchanged (the same string) when nothing applies. */
export type TextRewrite = (text: string, place: ContentPlace) => string;

/**
 * The request with every piece of content passed through `rewrite`. The original is never mutated: a new request
 * shares every message and part that did not change (the original stays what the exact cache and the idempotency
 * key are computed on). Tool-call arguments are JSON: only their string values are rewritten (never keys), and the
 * JSON is serialised again only when one changed.
 */
export function rewriteRequestContent(request: ChatRequest, rewrite: TextRewrite): ChatRequest {
  let changed = false;
  const messages = request.messages.map((message) => {
    const next = rewriteMessage(message, rewrite);
    if (next !== message) changed = true;
    return next;
  });
  let prediction = request.prediction;
  if (prediction) {
    const content = rewrite(prediction.content, 'prediction');
    if (content !== prediction.content) {
      prediction = { type: 'content', content };
      changed = true;
    }
  }
  if (!changed) return request;
  return { ...request, messages, prediction };
}

function rewriteMessage(message: ChatMessage, rewrite: TextRewrite): ChatMessage {
  const place: ContentPlace = message.role === 'tool' ? 'tool_result' : message.role;
  const content = rewriteParts(message.content, place, rewrite);
  if (message.role === 'assistant') {
    const toolCalls = rewriteToolCalls(message.toolCalls, rewrite);
    if (content === message.content && toolCalls === message.toolCalls) return message;
    return { ...message, content, toolCalls };
  }
  if (content === message.content) return message;
  return { ...message, content } as ChatMessage;
}

function rewriteParts(parts: ContentPart[], place: ContentPlace, rewrite: TextRewrite): ContentPart[] {
  let changed = false;
  const next = parts.map((part) => {
    if (part.type === 'document') {
      const document = rewriteDocument(part, rewrite);
      if (document !== part) changed = true;
      return document;
    }
    if (part.type !== 'text') return part;
    const text = rewrite(part.text, place);
    if (text === part.text) return part;
    changed = true;
    return { ...part, text };
  });
  return changed ? next : parts;
}

/**
 * A document's text where the gateway can read it: a text source, Anthropic's custom content, plain text sent as
 * base64, and the title and context beside it. PDFs and other binary files, URLs and file ids are not scanned: the
 * gateway does not parse PDFs or fetch URLs (docs/content-safety.md says so).
 */
function rewriteDocument(part: DocumentPart, rewrite: TextRewrite): DocumentPart {
  const source = part.source;
  let next: DocumentSource = source;
  if (source.type === 'text') {
    const text = rewrite(source.text, 'document');
    if (text !== source.text) next = { type: 'text', text };
  } else if (source.type === 'content') {
    const texts = source.texts.map((text) => rewrite(text, 'document'));
    if (texts.some((text, index) => text !== source.texts[index])) next = { type: 'content', texts };
  } else if (source.type === 'base64' && source.mediaType === 'text/plain') {
    const decoded = Buffer.from(source.data, 'base64').toString('utf8');
    const text = rewrite(decoded, 'document');
    if (text !== decoded) next = { type: 'base64', mediaType: source.mediaType, data: Buffer.from(text, 'utf8').toString('base64') };
  }
  const title = part.title === null ? null : rewrite(part.title, 'document');
  const context = part.context === null ? null : rewrite(part.context, 'document');
  if (next === source && title === part.title && context === part.context) return part;
  return { ...part, source: next, title, context };
}

function rewriteToolCalls(calls: ToolCall[], rewrite: TextRewrite): ToolCall[] {
  let changed = false;
  const next = calls.map((call) => {
    const args = rewriteJsonText(call.arguments, (text) => rewrite(text, 'tool_arguments'));
    if (args === call.arguments) return call;
    changed = true;
    return { ...call, arguments: args };
  });
  return changed ? next : calls;
}

/**
 * JSON text with its string values rewritten (object keys never); text that is not JSON is rewritten as text.
 * The client's JSON was bounded in depth and size when its body was parsed, so the walk is bounded too.
 */
export function rewriteJsonText(json: string, rewrite: (text: string) => string): string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return rewrite(json);
  }
  let changed = false;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const text = rewrite(node);
      if (text !== node) changed = true;
      return text;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') {
      // No prototype: a `__proto__` key in the arguments stays an ordinary key.
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const [key, child] of Object.entries(node)) out[key] = walk(child);
      return out;
    }
    return node;
  };
  const next = walk(value);
  return changed ? JSON.stringify(next) : json;
}
