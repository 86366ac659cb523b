import {
  type CacheControl, type ChatMessage, type ChatRequest, type ContentPart, type DocumentPart, documentText, ProviderError, type ReasoningPart, toolArgumentsObject, type ToolCall,
} from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import { ANTHROPIC_DOCUMENTS, unsupportedDocument } from '../parameters/document-support.js';
import { refusedParameter } from '../parameters/parameter-table.js';
import { anthropicBudget } from '../parameters/reasoning-budget.js';
import { continuesToolUseWithoutThinking } from '../parameters/thinking-continuation.js';
import { ANTHROPIC_PARAMETERS } from './anthropic-parameters.js';
import type { AnthropicCacheControl, AnthropicContentBlock, AnthropicMessage, AnthropicRequest, AnthropicToolChoice } from './anthropic-wire.js';

export interface AnthropicRequestOptions {
  /** The provider's model id. */
  model: string;
  /** Used when the request sets no limit: Anthropic requires `max_tokens`. */
  defaultMaxTokens: number;
  /** The deployment's output ceiling: with thinking and no client limit, the budget comes on top of the default. */
  maxOutputTokens?: number;
  stream: boolean;
}

/** The largest default output budget: a request without a limit should not reserve a model's whole window. */
export const DEFAULT_MAX_TOKENS_CAP = 4096;

/**
 * Names the first canonical parameter Anthropic's Messages API has no way to honour, or null. The
 * gateway then routes elsewhere or answers 400 naming it — never silently drops it (DESIGN §6).
 */
export function unsupportedByAnthropic(request: ChatRequest, deployment: ResolvedDeployment): string | null {
  const refused = refusedParameter(ANTHROPIC_PARAMETERS, request, deployment);
  if (refused) return refused;
  const document = unsupportedDocument(request, ANTHROPIC_DOCUMENTS);
  if (document) return document;
  if (request.temperature !== null && request.temperature > 1) return 'temperature';
  for (const [i, message] of request.messages.entries()) {
    if (message.role === 'user' && message.name) return `messages[${i}].name`;
    if (message.role === 'assistant') {
      for (const [j, call] of message.toolCalls.entries()) if (toolInput(call) === null) return `messages[${i}].tool_calls[${j}].function.arguments`;
    }
    for (const [j, part] of message.content.entries()) {
      if (part.type === 'image' && (part.detail === 'low' || part.detail === 'high')) return `messages[${i}].content[${j}].image_url.detail`;
      if (part.type === 'image' && message.role !== 'user' && message.role !== 'tool') return `messages[${i}].content[${j}]`;
      if (part.type === 'document' && message.role !== 'user') return `messages[${i}].content[${j}]`;
    }
  }
  return null;
}

/** Canonical request → Anthropic Messages JSON body. */
export function toAnthropicRequest(request: ChatRequest, options: AnthropicRequestOptions): AnthropicRequest {
  const body: AnthropicRequest = {
    model: options.model,
    max_tokens: request.maxOutputTokens ?? options.defaultMaxTokens,
    messages: toAnthropicMessages(request.messages),
  };
  const system = systemOf(request.messages);
  if (system !== null) body.system = system;
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.topK !== null) body.top_k = request.topK;
  if (request.stop.length) body.stop_sequences = request.stop;
  const endUser = request.user ?? request.safetyIdentifier;
  if (endUser !== null) body.metadata = { user_id: endUser };
  if (request.serviceTier !== null && request.serviceTier !== 'default') body.service_tier = request.serviceTier;
  // The parameter table lets only json_schema through, and only to deployments declaring structured_outputs.
  if (request.responseFormat?.type === 'json_schema') body.output_config = { format: { type: 'json_schema', schema: request.responseFormat.schema } };
  // A continuation of a tool-use turn whose signed thinking the client did not send back goes without thinking (see thinking-continuation.ts).
  if (request.reasoning !== null && !continuesToolUseWithoutThinking(request.messages)) {
    const deploymentCeiling = options.maxOutputTokens ?? options.defaultMaxTokens;
    const ceiling = request.maxOutputTokens ?? deploymentCeiling;
    const budget = anthropicBudget(request.reasoning, ceiling);
    // unsupportedByAnthropic keeps a request whose budget cannot fit from being routed here.
    if (budget === null) throw new ProviderError('invalid_request', 'max_tokens leaves no room for a thinking budget of at least 1024 tokens.', 400);
    body.thinking = { type: 'enabled', budget_tokens: budget };
    // Without a client limit, room for the thinking comes on top of the usual answer budget.
    if (request.maxOutputTokens === null) body.max_tokens = Math.min(deploymentCeiling, budget + options.defaultMaxTokens);
  }
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== null ? { description: tool.description } : {}),
      input_schema: tool.parameters,
      ...(tool.cacheControl ? { cache_control: wireCacheControl(tool.cacheControl) } : {}),
      ...(tool.eagerInputStreaming ? { eager_input_streaming: true } : {}),
      ...(tool.strict === true ? { strict: true } : {}),
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
        // Thinking first, signatures untouched: Anthropic verifies them when a tool-use turn continues.
        blocks = [
          ...(message.reasoning ?? []).flatMap(thinkingBlock),
          ...message.content.flatMap(toBlock),
          ...message.toolCalls.map((call, j) => toolUse(call, `messages[${index}].tool_calls[${j}]`)),
        ];
        break;
      case 'tool': {
        role = 'user';
        const content = message.content.flatMap(toBlock);
        blocks = [{
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: content.every((b) => b.type === 'text') ? textOf(message.content) : content,
          ...(message.isError ? { is_error: true } : {}),
          ...(message.cacheControl ? { cache_control: wireCacheControl(message.cacheControl) } : {}),
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
  const cache = part.cacheControl ? { cache_control: wireCacheControl(part.cacheControl) } : {};
  if (part.type === 'text') return part.text.length > 0 ? [{ type: 'text', text: part.text, ...cache }] : [];
  if (part.type === 'document') return [documentBlock(part, cache)];
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (data) return [{ type: 'image', source: { type: 'base64', media_type: part.mediaType ?? data[1], data: data[2] }, ...cache }];
  return [{ type: 'image', source: { type: 'url', url: part.url }, ...cache }];
}

/** A document block; base64 text/plain goes as a text source, which is how Anthropic takes plain text. */
function documentBlock(part: DocumentPart, cache: { cache_control?: AnthropicCacheControl }): AnthropicContentBlock {
  const labels = { ...(part.title !== null || part.filename !== null ? { title: part.title ?? part.filename! } : {}), ...(part.context !== null ? { context: part.context } : {}) };
  const source = part.source;
  switch (source.type) {
    case 'base64':
      if (source.mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.data }, ...labels, ...cache };
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: documentText(part)! }, ...labels, ...cache };
    case 'text':
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: source.text }, ...labels, ...cache };
    case 'url':
      return { type: 'document', source: { type: 'url', url: source.url }, ...labels, ...cache };
    case 'content':
      return { type: 'document', source: { type: 'content', content: source.texts.map((text) => ({ type: 'text' as const, text })) }, ...labels, ...cache };
    case 'file_id':
      // unsupportedDocument keeps a file id from being routed here (it names OpenAI's Files API).
      throw new ProviderError('invalid_request', 'An OpenAI file id cannot be sent to Anthropic.', 400);
  }
}

/**
 * Earlier thinking goes back as it came. Unsigned thinking (from a provider without signatures) cannot be
 * verified by Anthropic, which refuses it; the model never needs its past reasoning, so it stays out.
 */
function thinkingBlock(part: ReasoningPart): AnthropicContentBlock[] {
  if (part.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: part.data }];
  return part.signature !== null ? [{ type: 'thinking', thinking: part.text, signature: part.signature }] : [];
}

export function wireCacheControl(cache: CacheControl): AnthropicCacheControl {
  return cache.ttl ? { type: 'ephemeral', ttl: cache.ttl } : { type: 'ephemeral' };
}

/**
 * System messages are hoisted: Anthropic takes one top-level system prompt, not system turns. A plain
 * string unless a part carries a cache breakpoint, which needs the block form.
 */
function systemOf(messages: ChatMessage[]): AnthropicRequest['system'] | null {
  const parts = messages.flatMap((m) => (m.role === 'system' ? m.content : [])).filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text' && p.text.length > 0);
  if (parts.length === 0) return null;
  if (!parts.some((p) => p.cacheControl)) return parts.map((p) => p.text).join('\n\n');
  return parts.map((p) => ({ type: 'text' as const, text: p.text, ...(p.cacheControl ? { cache_control: wireCacheControl(p.cacheControl) } : {}) }));
}

function toolUse(call: ToolCall, param: string): AnthropicContentBlock {
  const input = toolInput(call);
  if (input === null) {
    // unsupportedByAnthropic keeps such history from being routed here; this guards direct callers.
    throw new ProviderError('invalid_request', `${param}.function.arguments must be a JSON object for this model.`, 400);
  }
  return { type: 'tool_use', id: call.id, name: call.name, input, ...(call.cacheControl ? { cache_control: wireCacheControl(call.cacheControl) } : {}) };
}

/** Anthropic stores tool input as an object. */
const toolInput = toolArgumentsObject;

function textOf(parts: ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
