import { assertJsonWithinBounds, type ChatMessage, type ChatRequest, type ContentPart, invalidRequest, type JsonShape, type ToolCall, type ToolChoice, type ToolDefinition, unsupportedParameter } from '../../../canonical/index.js';

const KNOWN = new Set(['model', 'max_tokens', 'messages', 'system', 'temperature', 'top_p', 'stop_sequences', 'stream', 'tools', 'tool_choice', 'metadata']);
/** Accepted with these values only: they ask for the default behaviour, so nothing is lost. */
const NEUTRAL: ReadonlyMap<string, (value: unknown) => boolean> = new Map<string, (value: unknown) => boolean>([
  ['service_tier', (value) => value === 'auto'],
  ['thinking', (value) => isObject(value) && value.type === 'disabled' && Object.keys(value).length === 1],
]);
/** Where the body holds client-defined JSON (tool schemas, earlier tool inputs): deeper nesting and any key name are allowed there. */
export const ANTHROPIC_MESSAGES_SHAPE: JsonShape = {
  pathStyle: 'dots',
  freeForm: [['tools', '*', 'input_schema'], ['messages', '*', 'content', '*', 'input']],
};
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const WHY_NOT = 'Switchyard cannot honour it on every route; remove it.';

type Json = Record<string, unknown>;

/**
 * Anthropic Messages body → canonical request. Problems are 400s whose message names the field in
 * Anthropic's own dotted style (`messages.1.content.0.tool_use_id`). Fields the canonical model has
 * no place for (top_k, cache_control, thinking, server tools, …) are rejected, never dropped.
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
    responseFormat: null,
    seed: null,
    user: parseMetadata(body.metadata),
    metadata: null,
    n: 1,
  };
}

function parseSystem(value: unknown): ChatMessage[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.length > 0 ? [{ role: 'system', content: [{ type: 'text', text: value }] }] : [];
  if (!Array.isArray(value)) throw invalidRequest('system: must be a string or an array of text blocks.', 'system');
  const parts = value.map((block, i): ContentPart => {
    const param = `system.${i}`;
    if (!isObject(block) || block.type !== 'text') throw invalidRequest(`${param}: system blocks must be {"type": "text", "text": ...}.`, param);
    rejectExtras(block, param, ['type', 'text']);
    if (typeof block.text !== 'string') throw invalidRequest(`${param}.text: must be a string.`, `${param}.text`);
    return { type: 'text', text: block.text };
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
  for (const [i, block] of blocks.entries()) {
    const at = `${param}.${i}`;
    if (block.type === 'text') content.push(textPart(block, at));
    else if (block.type === 'tool_use') {
      rejectExtras(block, at, ['type', 'id', 'name', 'input']);
      if (typeof block.id !== 'string' || block.id.length === 0) throw invalidRequest(`${at}.id: Field required.`, `${at}.id`);
      if (typeof block.name !== 'string' || block.name.length === 0) throw invalidRequest(`${at}.name: Field required.`, `${at}.name`);
      if (!isObject(block.input)) throw invalidRequest(`${at}.input: must be an object.`, `${at}.input`);
      toolUseIds.add(block.id);
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    } else throw unsupportedParameter(`${at}.type`, `content blocks of type '${String(block.type)}' are not supported in assistant turns (use text or tool_use).`);
  }
  return { role: 'assistant', content, toolCalls };
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
      case 'tool_result': {
        if (parts.length > 0) {
          throw invalidRequest(`${at}: tool_result blocks must come before any other content in a user turn.`, at);
        }
        rejectExtras(block, at, ['type', 'tool_use_id', 'content', 'is_error']);
        if (typeof block.tool_use_id !== 'string' || !toolUseIds.has(block.tool_use_id)) {
          throw invalidRequest(`${at}.tool_use_id: must name a tool_use block of an earlier assistant turn.`, `${at}.tool_use_id`);
        }
        const isError = block.is_error;
        if (isError !== undefined && isError !== null && typeof isError !== 'boolean') throw invalidRequest(`${at}.is_error: must be a boolean.`, `${at}.is_error`);
        out.push({ role: 'tool', toolCallId: block.tool_use_id, content: toolResultContent(block.content, `${at}.content`), ...(isError ? { isError: true } : {}) });
        break;
      }
      default:
        throw unsupportedParameter(`${at}.type`, `content blocks of type '${String(block.type)}' are not supported in user turns (use text, image or tool_result).`);
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
  rejectExtras(block, param, ['type', 'text']);
  if (typeof block.text !== 'string') throw invalidRequest(`${param}.text: must be a string.`, `${param}.text`);
  return { type: 'text', text: block.text };
}

function imagePart(block: Json, param: string): ContentPart {
  rejectExtras(block, param, ['type', 'source']);
  const source = block.source;
  if (!isObject(source)) throw invalidRequest(`${param}.source: Field required.`, `${param}.source`);
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !IMAGE_TYPES.has(source.media_type)) {
      throw invalidRequest(`${param}.source.media_type: must be one of ${[...IMAGE_TYPES].join(', ')}.`, `${param}.source.media_type`);
    }
    if (typeof source.data !== 'string' || !/^[A-Za-z0-9+/=\s]+$/.test(source.data)) {
      throw invalidRequest(`${param}.source.data: must be base64 text.`, `${param}.source.data`);
    }
    return { type: 'image', url: `data:${source.media_type};base64,${source.data}`, detail: null, mediaType: source.media_type };
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string' || !/^https?:\/\//i.test(source.url)) throw invalidRequest(`${param}.source.url: must be an http(s) URL.`, `${param}.source.url`);
    return { type: 'image', url: source.url, detail: null, mediaType: null };
  }
  throw unsupportedParameter(`${param}.source.type`, "image sources must be 'base64' or 'url'.");
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
    rejectExtras(tool, param, ['type', 'name', 'description', 'input_schema']);
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) throw invalidRequest(`${param}.name: must match ^[a-zA-Z0-9_-]{1,64}$.`, `${param}.name`);
    if (names.has(tool.name)) throw invalidRequest(`${param}.name: '${tool.name}' is used twice.`, `${param}.name`);
    names.add(tool.name);
    if (tool.description !== undefined && tool.description !== null && typeof tool.description !== 'string') {
      throw invalidRequest(`${param}.description: must be a string.`, `${param}.description`);
    }
    if (!isObject(tool.input_schema)) throw invalidRequest(`${param}.input_schema: Field required (a JSON Schema object).`, `${param}.input_schema`);
    return { name: tool.name, description: typeof tool.description === 'string' ? tool.description : null, parameters: tool.input_schema, strict: null };
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

function optionalNumber(source: Json, key: string, min: number, max: number): number | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidRequest(`${key}: must be a number from ${min} to ${max}.`, key);
  }
  return value;
}
