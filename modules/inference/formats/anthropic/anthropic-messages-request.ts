import {
  assertJsonWithinBounds, type CacheControl, type ChatMessage, type ChatRequest, type ContentPart, type DocumentSource, invalidRequest, isBase64, type JsonShape, type ReasoningPart,
  type ReasoningRequest, type ResponseFormat, type ToolCall, type ToolChoice, type ToolDefinition, UNSET_PARAMETERS, unsupportedParameter,
} from '../../../canonical/index.js';
import { documentUrlOf, optionalDocumentString } from '../document-fields.js';

/** Every parameter Switchyard parses; whether a route honours it is the provider's parameter table's call. */
const KNOWN = new Set([
  'model', 'max_tokens', 'messages', 'system', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'stream', 'tools', 'tool_choice', 'metadata',
  'thinking', 'service_tier', 'output_config',
]);
const NEUTRAL: ReadonlyMap<string, (value: unknown) => boolean> = new Map<string, (value: unknown) => boolean>();
/** Where the body holds client-defined JSON (tool schemas, earlier tool inputs): deeper nesting and any key name are allowed there. */
export const ANTHROPIC_MESSAGES_SHAPE: JsonShape = {
  pathStyle: 'dots',
  freeForm: [['tools', '*', 'input_schema'], ['messages', '*', 'content', '*', 'input'], ['output_config', 'format', 'schema']],
};
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const WHY_NOT = 'Switchyard cannot honour it on every route; remove it.';

type Json = Record<string, unknown>;

/**
 * Anthropic Messages body → canonical request. Problems are 400s whose message names the field in
 * Anthropic's own dotted style (`messages.1.content.0.tool_use_id`). Fields the canonical model has
 * no place for (server tools, citations, …) are rejected, never dropped.
 */
export function parseAnthropicMessagesRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw invalidRequest('The request body must be a JSON object.');
  assertJsonWithinBounds(body, ANTHROPIC_MESSAGES_SHAPE);
  for (const [key, value] of Object.entries(body)) {
    if (KNOWN.has(key) || value === undefined || value === null || NEUTRAL.get(key)?.(value)) continue;
    throw unsupportedParameter(key, WHY_NOT);
  }
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest('model: Field required (a string naming the model).', 'model');
  const maxTokens = body.max_tokens;
  if (maxTokens === undefined || maxTokens === null) throw invalidRequest('max_tokens: Field required (an integer ≥ 1).', 'max_tokens');
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw invalidRequest('max_tokens: must be an integer ≥ 1.', 'max_tokens');
  }
  const stream = optionalBoolean(body, 'stream') ?? false;
  const tools = parseTools(body.tools);
  const { toolChoice, parallelToolCalls } = parseToolChoice(body.tool_choice, tools);
  const reasoning = parseThinking(body.thinking, maxTokens);
  const serviceTier = body.service_tier ?? null;
  if (serviceTier !== null && serviceTier !== 'auto' && serviceTier !== 'standard_only') {
    throw invalidRequest("service_tier: must be 'auto' or 'standard_only'.", 'service_tier');
  }
  return {
    model,
    messages: [...parseSystem(body.system), ...parseMessages(body.messages)],
    maxOutputTokens: maxTokens,
    temperature: optionalNumber(body, 'temperature', 0, 1),
    topP: optionalNumber(body, 'top_p', 0, 1),
    stop: parseStopSequences(body.stop_sequences),
    stream,
    includeUsage: stream, // Anthropic streams always carry usage
    tools,
    toolChoice,
    parallelToolCalls,
    responseFormat: parseOutputConfig(body.output_config),
    seed: null,
    user: parseMetadata(body.metadata),
    metadata: null,
    n: 1,
    ...UNSET_PARAMETERS,
    topK: optionalInteger(body, 'top_k'),
    reasoning,
    serviceTier: serviceTier as string | null,
  };
}

/**
 * `output_config.format: {type: "json_schema", schema}` (Anthropic's structured outputs) → the canonical json_schema
 * request, which each provider's parameter table routes (output_config.format again on Anthropic deployments that
 * declare structured_outputs, response_format json_schema on OpenAI, responseSchema on Gemini). `effort` has no
 * canonical meaning (it is not a thinking budget), so it is refused by name rather than dropped.
 */
function parseOutputConfig(value: unknown): ResponseFormat | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalidRequest('output_config: must be an object such as {"format": {"type": "json_schema", "schema": {...}}}.', 'output_config');
  rejectExtras(value, 'output_config', ['format']);
  const format = value.format;
  if (format === undefined || format === null) return null;
  if (!isObject(format) || format.type !== 'json_schema') throw invalidRequest("output_config.format.type: must be 'json_schema'.", 'output_config.format.type');
  rejectExtras(format, 'output_config.format', ['type', 'schema']);
  if (!isObject(format.schema)) throw invalidRequest('output_config.format.schema: Field required (a JSON Schema object).', 'output_config.format.schema');
  return { type: 'json_schema', name: 'output', schema: format.schema, strict: null, description: null };
}

/** `thinking: {type: "enabled", budget_tokens}` → a budget; `{type: "disabled"}` asks for nothing. */
function parseThinking(value: unknown, maxTokens: number): ReasoningRequest | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalidRequest('thinking: must be an object such as {"type": "enabled", "budget_tokens": 2048}.', 'thinking');
  if (value.type === 'disabled') {
    rejectExtras(value, 'thinking', ['type']);
    return null;
  }
  if (value.type !== 'enabled') throw invalidRequest("thinking.type: must be 'enabled' or 'disabled'.", 'thinking.type');
  rejectExtras(value, 'thinking', ['type', 'budget_tokens']);
  const budget = value.budget_tokens;
  if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1024) {
    throw invalidRequest('thinking.budget_tokens: Field required (an integer ≥ 1024).', 'thinking.budget_tokens');
  }
  if (budget >= maxTokens) throw invalidRequest('thinking.budget_tokens: must be less than max_tokens.', 'thinking.budget_tokens');
  return { effort: null, budgetTokens: budget };
}

function parseSystem(value: unknown): ChatMessage[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.length > 0 ? [{ role: 'system', content: [{ type: 'text', text: value }] }] : [];
  if (!Array.isArray(value)) throw invalidRequest('system: must be a string or an array of text blocks.', 'system');
  const parts = value.map((block, i): ContentPart => {
    const param = `system.${i}`;
    if (!isObject(block) || block.type !== 'text') throw invalidRequest(`${param}: system blocks must be {"type": "text", "text": ...}.`, param);
    return textPart(block, param);
  });
  return parts.length ? [{ role: 'system', content: parts }] : [];
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest('messages: must be a non-empty array.', 'messages');
  const out: ChatMessage[] = [];
  const toolUseIds = new Set<string>();
  for (const [index, raw] of value.entries()) {
    const param = `messages.${index}`;
    if (!isObject(raw)) throw invalidRequest(`${param}: must be an object with a role and content.`, param);
    rejectExtras(raw, param, ['role', 'content']);
    const blocks = contentBlocks(raw.content, `${param}.content`);
    if (raw.role === 'assistant') out.push(assistantMessage(blocks, `${param}.content`, toolUseIds));
    else if (raw.role === 'user') out.push(...userMessages(blocks, `${param}.content`, toolUseIds));
    else throw invalidRequest(`${param}.role: must be "user" or "assistant" (system prompts go in the top-level "system").`, `${param}.role`);
  }
  return out;
}

function contentBlocks(value: unknown, param: string): Json[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  if (!Array.isArray(value)) throw invalidRequest(`${param}: must be a string or an array of content blocks.`, param);
  return value.map((block, i) => {
    if (!isObject(block) || typeof block.type !== 'string') throw invalidRequest(`${param}.${i}: must be a content block with a type.`, `${param}.${i}`);
    return block;
  });
}

function assistantMessage(blocks: Json[], param: string, toolUseIds: Set<string>): ChatMessage {
  const content: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const [i, block] of blocks.entries()) {
    const at = `${param}.${i}`;
    if (block.type === 'text') content.push(textPart(block, at));
    else if (block.type === 'thinking') {
      rejectExtras(block, at, ['type', 'thinking', 'signature']);
      if (typeof block.thinking !== 'string') throw invalidRequest(`${at}.thinking: must be a string.`, `${at}.thinking`);
      if (block.signature !== undefined && block.signature !== null && typeof block.signature !== 'string') throw invalidRequest(`${at}.signature: must be a string.`, `${at}.signature`);
      reasoning.push({ type: 'thinking', text: block.thinking, signature: (block.signature as string | undefined) ?? null });
    } else if (block.type === 'redacted_thinking') {
      rejectExtras(block, at, ['type', 'data']);
      if (typeof block.data !== 'string') throw invalidRequest(`${at}.data: must be a string.`, `${at}.data`);
      reasoning.push({ type: 'redacted_thinking', data: block.data });
    } else if (block.type === 'tool_use') {
      rejectExtras(block, at, ['type', 'id', 'name', 'input', 'cache_control']);
      if (typeof block.id !== 'string' || block.id.length === 0) throw invalidRequest(`${at}.id: Field required.`, `${at}.id`);
      if (typeof block.name !== 'string' || block.name.length === 0) throw invalidRequest(`${at}.name: Field required.`, `${at}.name`);
      if (!isObject(block.input)) throw invalidRequest(`${at}.input: must be an object.`, `${at}.input`);
      toolUseIds.add(block.id);
      const cacheControl = parseCacheControl(block.cache_control, `${at}.cache_control`);
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input), ...(cacheControl ? { cacheControl } : {}) });
    } else throw unsupportedParameter(`${at}.type`, `content blocks of type '${String(block.type)}' are not supported in assistant turns (use text, thinking, redacted_thinking or tool_use).`);
  }
  return { role: 'assistant', content, toolCalls, ...(reasoning.length ? { reasoning } : {}) };
}

/** One user turn → its tool results (as canonical tool messages, in order), then the rest as one user message. */
function userMessages(blocks: Json[], param: string, toolUseIds: Set<string>): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const [i, block] of blocks.entries()) {
    const at = `${param}.${i}`;
    switch (block.type) {
      case 'text':
        parts.push(textPart(block, at));
        break;
      case 'image':
        parts.push(imagePart(block, at));
        break;
      case 'document':
        parts.push(documentPart(block, at));
        break;
      case 'tool_result': {
        if (parts.length > 0) {
          throw invalidRequest(`${at}: tool_result blocks must come before any other content in a user turn.`, at);
        }
        rejectExtras(block, at, ['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
        if (typeof block.tool_use_id !== 'string' || !toolUseIds.has(block.tool_use_id)) {
          throw invalidRequest(`${at}.tool_use_id: must name a tool_use block of an earlier assistant turn.`, `${at}.tool_use_id`);
        }
        const isError = block.is_error;
        if (isError !== undefined && isError !== null && typeof isError !== 'boolean') throw invalidRequest(`${at}.is_error: must be a boolean.`, `${at}.is_error`);
        const cacheControl = parseCacheControl(block.cache_control, `${at}.cache_control`);
        out.push({
          role: 'tool', toolCallId: block.tool_use_id, content: toolResultContent(block.content, `${at}.content`),
          ...(isError ? { isError: true } : {}), ...(cacheControl ? { cacheControl } : {}),
        });
        break;
      }
      default:
        throw unsupportedParameter(`${at}.type`, `content blocks of type '${String(block.type)}' are not supported in user turns (use text, image, document or tool_result).`);
    }
  }
  if (parts.length > 0 || out.length === 0) out.push({ role: 'user', content: parts });
  return out;
}

function toolResultContent(value: unknown, param: string): ContentPart[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  if (!Array.isArray(value)) throw invalidRequest(`${param}: must be a string or an array of text and image blocks.`, param);
  return value.map((block, i): ContentPart => {
    const at = `${param}.${i}`;
    if (isObject(block) && block.type === 'text') return textPart(block, at);
    if (isObject(block) && block.type === 'image') return imagePart(block, at);
    throw unsupportedParameter(`${at}.type`, 'tool results may hold text and image blocks only.');
  });
}

function textPart(block: Json, param: string): ContentPart {
  rejectExtras(block, param, ['type', 'text', 'cache_control']);
  if (typeof block.text !== 'string') throw invalidRequest(`${param}.text: must be a string.`, `${param}.text`);
  const cacheControl = parseCacheControl(block.cache_control, `${param}.cache_control`);
  return { type: 'text', text: block.text, ...(cacheControl ? { cacheControl } : {}) };
}

/** `{"type": "ephemeral"}` with an optional `ttl` of 5m or 1h: a prompt-cache breakpoint. */
function parseCacheControl(value: unknown, param: string): CacheControl | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value) || value.type !== 'ephemeral') throw invalidRequest(`${param}: must be {"type": "ephemeral"}.`, param);
  rejectExtras(value, param, ['type', 'ttl']);
  const ttl = value.ttl ?? null;
  if (ttl !== null && ttl !== '5m' && ttl !== '1h') throw invalidRequest(`${param}.ttl: must be '5m' or '1h'.`, `${param}.ttl`);
  return { type: 'ephemeral', ttl: ttl as CacheControl['ttl'] };
}

function imagePart(block: Json, param: string): ContentPart {
  rejectExtras(block, param, ['type', 'source', 'cache_control']);
  const cacheControl = parseCacheControl(block.cache_control, `${param}.cache_control`);
  const cache = cacheControl ? { cacheControl } : {};
  const source = block.source;
  if (!isObject(source)) throw invalidRequest(`${param}.source: Field required.`, `${param}.source`);
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !IMAGE_TYPES.has(source.media_type)) {
      throw invalidRequest(`${param}.source.media_type: must be one of ${[...IMAGE_TYPES].join(', ')}.`, `${param}.source.media_type`);
    }
    if (typeof source.data !== 'string' || !/^[A-Za-z0-9+/=\s]+$/.test(source.data)) {
      throw invalidRequest(`${param}.source.data: must be base64 text.`, `${param}.source.data`);
    }
    return { type: 'image', url: `data:${source.media_type};base64,${source.data}`, detail: null, mediaType: source.media_type, ...cache };
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string' || !/^https?:\/\//i.test(source.url)) throw invalidRequest(`${param}.source.url: must be an http(s) URL.`, `${param}.source.url`);
    return { type: 'image', url: source.url, detail: null, mediaType: null, ...cache };
  }
  throw unsupportedParameter(`${param}.source.type`, "image sources must be 'base64' or 'url'.");
}

/**
 * A `document` block: base64 PDF, plain text, URL or custom content (text blocks), with an optional title,
 * context and cache_control. Citations are refused when enabled: the answer's citation blocks have no place
 * in the canonical answer yet, and dropping them would hand the client an answer it did not ask for.
 */
function documentPart(block: Json, param: string): ContentPart {
  rejectExtras(block, param, ['type', 'source', 'title', 'context', 'citations', 'cache_control']);
  const cacheControl = parseCacheControl(block.cache_control, `${param}.cache_control`);
  const title = optionalDocumentString(block.title, `${param}.title`, 500);
  const context = optionalDocumentString(block.context, `${param}.context`, 100_000);
  const citations = block.citations;
  if (citations !== undefined && citations !== null) {
    if (!isObject(citations) || typeof citations.enabled !== 'boolean') throw invalidRequest(`${param}.citations: must be {"enabled": true|false}.`, `${param}.citations`);
    rejectExtras(citations, `${param}.citations`, ['enabled']);
    if (citations.enabled) throw unsupportedParameter(`${param}.citations`, 'citations are not relayed by Switchyard; send the document without them.');
  }
  const source = block.source;
  if (!isObject(source)) throw invalidRequest(`${param}.source: Field required.`, `${param}.source`);
  const at = `${param}.source`;
  const part = (documentSource: DocumentSource): ContentPart => ({ type: 'document', source: documentSource, title, context, filename: null, at: param, ...(cacheControl ? { cacheControl } : {}) });
  switch (source.type) {
    case 'base64':
      rejectExtras(source, at, ['type', 'media_type', 'data']);
      if (source.media_type !== 'application/pdf') throw invalidRequest(`${at}.media_type: must be 'application/pdf' (send plain text with a text source).`, `${at}.media_type`);
      if (typeof source.data !== 'string' || !isBase64(source.data)) throw invalidRequest(`${at}.data: must be base64 text.`, `${at}.data`);
      return part({ type: 'base64', mediaType: 'application/pdf', data: source.data });
    case 'text':
      rejectExtras(source, at, ['type', 'media_type', 'data']);
      if (source.media_type !== 'text/plain') throw invalidRequest(`${at}.media_type: must be 'text/plain'.`, `${at}.media_type`);
      if (typeof source.data !== 'string') throw invalidRequest(`${at}.data: must be a string.`, `${at}.data`);
      return part({ type: 'text', text: source.data });
    case 'url':
      rejectExtras(source, at, ['type', 'url']);
      return part({ type: 'url', url: documentUrlOf(source.url, `${at}.url`) });
    case 'content': {
      rejectExtras(source, at, ['type', 'content']);
      if (typeof source.content === 'string') return part({ type: 'content', texts: [source.content] });
      if (!Array.isArray(source.content) || source.content.length === 0) throw invalidRequest(`${at}.content: must be a string or a non-empty array of text blocks.`, `${at}.content`);
      const texts = source.content.map((item, i) => {
        const itemAt = `${at}.content.${i}`;
        if (!isObject(item) || item.type !== 'text') throw unsupportedParameter(`${itemAt}.type`, 'custom document content may hold text blocks only.');
        rejectExtras(item, itemAt, ['type', 'text']);
        if (typeof item.text !== 'string') throw invalidRequest(`${itemAt}.text: must be a string.`, `${itemAt}.text`);
        return item.text;
      });
      return part({ type: 'content', texts });
    }
    case 'file':
      throw unsupportedParameter(`${at}.type`, "Anthropic's Files API is not available through Switchyard; send the document's content (base64, text or url).");
    default:
      throw invalidRequest(`${at}.type: must be 'base64', 'text', 'url' or 'content'.`, `${at}.type`);
  }
}

function parseTools(value: unknown): ToolDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest('tools: must be an array.', 'tools');
  const names = new Set<string>();
  return value.map((tool, i): ToolDefinition => {
    const param = `tools.${i}`;
    if (!isObject(tool)) throw invalidRequest(`${param}: must be an object.`, param);
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      throw unsupportedParameter(`${param}.type`, `Anthropic server tools ('${String(tool.type)}') are not supported; declare a custom tool with an input_schema.`);
    }
    rejectExtras(tool, param, ['type', 'name', 'description', 'input_schema', 'cache_control', 'eager_input_streaming', 'strict']);
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) throw invalidRequest(`${param}.name: must match ^[a-zA-Z0-9_-]{1,64}$.`, `${param}.name`);
    if (names.has(tool.name)) throw invalidRequest(`${param}.name: '${tool.name}' is used twice.`, `${param}.name`);
    names.add(tool.name);
    if (tool.description !== undefined && tool.description !== null && typeof tool.description !== 'string') {
      throw invalidRequest(`${param}.description: must be a string.`, `${param}.description`);
    }
    if (!isObject(tool.input_schema)) throw invalidRequest(`${param}.input_schema: Field required (a JSON Schema object).`, `${param}.input_schema`);
    const cacheControl = parseCacheControl(tool.cache_control, `${param}.cache_control`);
    const eager = tool.eager_input_streaming;
    if (eager !== undefined && eager !== null && typeof eager !== 'boolean') throw invalidRequest(`${param}.eager_input_streaming: must be a boolean.`, `${param}.eager_input_streaming`);
    const strict = tool.strict;
    if (strict !== undefined && strict !== null && typeof strict !== 'boolean') throw invalidRequest(`${param}.strict: must be a boolean.`, `${param}.strict`);
    return {
      name: tool.name, description: typeof tool.description === 'string' ? tool.description : null, parameters: tool.input_schema, strict: typeof strict === 'boolean' ? strict : null,
      ...(cacheControl ? { cacheControl } : {}), ...(eager === true ? { eagerInputStreaming: true } : {}),
    };
  });
}

function parseToolChoice(value: unknown, tools: ToolDefinition[]): { toolChoice: ToolChoice | null; parallelToolCalls: boolean | null } {
  if (value === undefined || value === null) return { toolChoice: null, parallelToolCalls: null };
  if (!isObject(value)) throw invalidRequest('tool_choice: must be an object such as {"type": "auto"}.', 'tool_choice');
  rejectExtras(value, 'tool_choice', ['type', 'name', 'disable_parallel_tool_use']);
  const disable = value.disable_parallel_tool_use;
  if (disable !== undefined && disable !== null && typeof disable !== 'boolean') {
    throw invalidRequest('tool_choice.disable_parallel_tool_use: must be a boolean.', 'tool_choice.disable_parallel_tool_use');
  }
  const parallelToolCalls = disable === true ? false : null;
  switch (value.type) {
    case 'auto':
      return { toolChoice: { type: 'auto' }, parallelToolCalls };
    case 'none':
      return { toolChoice: { type: 'none' }, parallelToolCalls };
    case 'any':
      if (tools.length === 0) throw invalidRequest("tool_choice: type 'any' needs tools.", 'tool_choice');
      return { toolChoice: { type: 'required' }, parallelToolCalls };
    case 'tool': {
      const name = value.name;
      if (typeof name !== 'string' || !tools.some((tool) => tool.name === name)) {
        throw invalidRequest("tool_choice.name: must name one of the declared tools.", 'tool_choice.name');
      }
      return { toolChoice: { type: 'tool', name }, parallelToolCalls };
    }
    default:
      throw invalidRequest("tool_choice.type: must be 'auto', 'any', 'tool' or 'none'.", 'tool_choice.type');
  }
}

function parseStopSequences(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' && item.length > 0)) return value as string[];
  throw invalidRequest('stop_sequences: must be an array of non-empty strings.', 'stop_sequences');
}

/** Anthropic's metadata holds only `user_id`, which is the canonical end-user id. */
function parseMetadata(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalidRequest('metadata: must be an object.', 'metadata');
  for (const key of Object.keys(value)) if (key !== 'user_id') throw unsupportedParameter(`metadata.${key}`, WHY_NOT);
  const user = value.user_id;
  if (user === undefined || user === null) return null;
  if (typeof user !== 'string' || user.length > 256) throw invalidRequest('metadata.user_id: must be a string of at most 256 characters.', 'metadata.user_id');
  return user;
}

/** `cache_control` and other per-block extras have no canonical place: name them rather than drop them. */
function rejectExtras(block: Json, param: string, allowed: string[]): void {
  for (const [key, value] of Object.entries(block)) {
    if (allowed.includes(key) || value === undefined || value === null) continue;
    throw unsupportedParameter(`${param}.${key}`, WHY_NOT);
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalBoolean(source: Json, key: string): boolean | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'boolean') throw invalidRequest(`${key}: must be a boolean.`, key);
  return value;
}

function optionalInteger(source: Json, key: string): number | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalidRequest(`${key}: must be an integer ≥ 1.`, key);
  return value;
}

function optionalNumber(source: Json, key: string, min: number, max: number): number | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidRequest(`${key}: must be a number from ${min} to ${max}.`, key);
  }
  return value;
}
