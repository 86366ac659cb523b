import { type ChatMessage, type ChatRequest, type ContentPart, ProviderError, toolArgumentsObject, type ToolCall } from '../../canonical/index.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicRequest, AnthropicToolChoice } from './anthropic-wire.js';

export interface AnthropicRequestOptions {
  /** The provider's model id. */
  model: string;
  /** Used when the request sets no limit: Anthropic requires `max_tokens`. */
  defaultMaxTokens: number;
  stream: boolean;
}

/** The largest default output budget: a request without a limit should not reserve a model's whole window. */
export const DEFAULT_MAX_TOKENS_CAP = 4096;

/**
 * Names the first canonical parameter Anthropic's Messages API has no way to honour, or null. The
 * gateway then routes elsewhere or answers 400 naming it — never silently drops it (DESIGN §6).
 */
export function unsupportedByAnthropic(request: ChatRequest): string | null {
  if (request.n > 1) return 'n';
  if (request.seed !== null) return 'seed';
  if (request.temperature !== null && request.temperature > 1) return 'temperature';
  if (request.responseFormat && request.responseFormat.type !== 'text') return 'response_format';
  if (request.metadata !== null && Object.keys(request.metadata).length > 0) return 'metadata';
  for (const [i, tool] of request.tools.entries()) if (tool.strict === true) return `tools[${i}].function.strict`;
  for (const [i, message] of request.messages.entries()) {
    if (message.role === 'user' && message.name) return `messages[${i}].name`;
    if (message.role === 'assistant') {
      for (const [j, call] of message.toolCalls.entries()) if (toolInput(call) === null) return `messages[${i}].tool_calls[${j}].function.arguments`;
    }
    for (const [j, part] of message.content.entries()) {
      if (part.type === 'image' && (part.detail === 'low' || part.detail === 'high')) return `messages[${i}].content[${j}].image_url.detail`;
      if (part.type === 'image' && message.role !== 'user' && message.role !== 'tool') return `messages[${i}].content[${j}]`;
    }
  }
  return null;
}

/** Canonical request → Anthropic Messages JSON body. */
export function toAnthropicRequest(request: ChatRequest, options: AnthropicRequestOptions): AnthropicRequest {
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => textOf(m.content))
    .filter((text) => text.length > 0);
  const body: AnthropicRequest = {
    model: options.model,
    max_tokens: request.maxOutputTokens ?? options.defaultMaxTokens,
    messages: toAnthropicMessages(request.messages),
  };
  // System messages are hoisted: Anthropic takes one top-level system prompt, not system turns.
  if (system.length) body.system = system.join('\n\n');
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.stop.length) body.stop_sequences = request.stop;
  if (request.user !== null) body.metadata = { user_id: request.user };
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== null ? { description: tool.description } : {}),
      input_schema: tool.parameters,
    }));
    const choice = toolChoice(request);
    if (choice) body.tool_choice = choice;
  }
  if (options.stream) body.stream = true;
  return body;
}

function toolChoice(request: ChatRequest): AnthropicToolChoice | null {
  const serial = request.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  switch (request.toolChoice?.type) {
    case undefined:
      return request.parallelToolCalls === false ? { type: 'auto', ...serial } : null;
    case 'auto':
      return { type: 'auto', ...serial };
    case 'required':
      return { type: 'any', ...serial };
    case 'tool':
      return { type: 'tool', name: request.toolChoice.name, ...serial };
    case 'none':
      return { type: 'none' };
  }
}

/**
 * Anthropic needs strictly alternating user/assistant turns: tool results travel as `tool_result`
 * blocks in a user turn, and consecutive turns of one role are merged into one message.
 */
function toAnthropicMessages(messages: ChatMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const [index, message] of messages.entries()) {
    let role: AnthropicMessage['role'];
    let blocks: AnthropicContentBlock[];
    switch (message.role) {
      case 'system':
        continue;
      case 'user':
        role = 'user';
        blocks = message.content.flatMap(toBlock);
        break;
      case 'assistant':
        role = 'assistant';
        blocks = [...message.content.flatMap(toBlock), ...message.toolCalls.map((call, j) => toolUse(call, `messages[${index}].tool_calls[${j}]`))];
        break;
      case 'tool': {
        role = 'user';
        const content = message.content.flatMap(toBlock);
        blocks = [{
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: content.every((b) => b.type === 'text') ? textOf(message.content) : content,
          ...(message.isError ? { is_error: true } : {}),
        }];
        break;
      }
    }
    if (blocks.length === 0) continue; // Anthropic rejects empty turns; an empty turn carries nothing
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

function toBlock(part: ContentPart): AnthropicContentBlock[] {
  if (part.type === 'text') return part.text.length > 0 ? [{ type: 'text', text: part.text }] : [];
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (data) return [{ type: 'image', source: { type: 'base64', media_type: part.mediaType ?? data[1], data: data[2] } }];
  return [{ type: 'image', source: { type: 'url', url: part.url } }];
}

function toolUse(call: ToolCall, param: string): AnthropicContentBlock {
  const input = toolInput(call);
  if (input === null) {
    // unsupportedByAnthropic keeps such history from being routed here; this guards direct callers.
    throw new ProviderError('invalid_request', `${param}.function.arguments must be a JSON object for this model.`, 400);
  }
  return { type: 'tool_use', id: call.id, name: call.name, input };
}

/** Anthropic stores tool input as an object. */
const toolInput = toolArgumentsObject;

function textOf(parts: ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
