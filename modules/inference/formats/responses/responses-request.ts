import {
  assertJsonWithinBounds, type ChatMessage, type ChatRequest, type ContentPart, invalidRequest, JSON_LIMITS, type JsonShape, jsonTextNestsDeeperThan,
  type ReasoningEffort, type ResponseFormat, type ToolCall, type ToolChoice, type ToolDefinition, UNSET_PARAMETERS, unsupportedParameter,
} from '../../../canonical/index.js';
import { type Json, isNeutralValue, isObject, optionalBoolean, optionalInteger, optionalNumber, optionalString, parseMetadata } from '../body-fields.js';
import { documentUrlOf, fileDataSource, fileIdOf, optionalDocumentString } from '../document-fields.js';
import { type ResponsesEcho, rememberEcho } from './responses-echo.js';

const KNOWN = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'text', 'max_output_tokens', 'temperature', 'top_p',
  'metadata', 'parallel_tool_calls', 'stream', 'stream_options', 'store', 'previous_response_id', 'reasoning', 'user', 'safety_identifier',
  'prompt_cache_key', 'prompt_cache_retention', 'service_tier',
]);
/** Accepted with these values only: what SDKs send by default and what changes nothing. */
const NEUTRAL_VALUES: ReadonlyMap<string, readonly unknown[]> = new Map<string, unknown[]>([
  ['truncation', ['disabled']], ['background', [false]], ['top_logprobs', [0]],
  ['presence_penalty', [0]], ['frequency_penalty', [0]],
]);
/** Where the body holds client-defined JSON: tool parameter schemas and the structured-output schema. */
export const RESPONSES_SHAPE: JsonShape = {
  pathStyle: 'brackets',
  freeForm: [['tools', '*', 'parameters'], ['text', 'format', 'schema']],
};
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const SERVICE_TIERS = ['auto', 'default', 'flex', 'priority', 'scale'] as const;
const PROMPT_CACHE_RETENTIONS = ['in_memory', '24h'] as const;
/** Item types of the Responses API that need state or tools the gateway does not have. */
const STATEFUL_ITEMS = new Set(['item_reference', 'reasoning', 'compaction']);


/**
 * OpenAI Responses body (`POST /v1/responses`) → canonical request. The gateway is stateless: `store`
 * defaults to false, and `store: true`, `previous_response_id` and references to stored items are
 * refused with a 400 naming them. Every problem is a 400 naming the parameter; nothing is dropped.
 */
export function parseResponsesRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw invalidRequest('The request body must be a JSON object.');
  assertJsonWithinBounds(body, RESPONSES_SHAPE);
  for (const [key, value] of Object.entries(body)) {
    if (KNOWN.has(key) || isNeutralValue(NEUTRAL_VALUES, key, value)) continue;
    throw unsupportedParameter(key, 'Switchyard does not support it on /v1/responses; remove it or send its default value.');
  }
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest("'model' is required and must be a string.", 'model');
  const store = optionalBoolean(body, 'store') ?? false;
  if (store) {
    throw unsupportedParameter('store', 'Switchyard keeps no conversation state: responses are never stored. Send store: false (the default here) and pass the whole conversation in input.');
  }
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw unsupportedParameter('previous_response_id', 'Switchyard keeps no conversation state; pass the earlier turns as input items instead.');
  }
  const reasoning = parseReasoning(body.reasoning);
  parseStreamOptions(body.stream_options);

  const instructions = optionalString(body, 'instructions');
  const messages: ChatMessage[] = [];
  if (instructions !== null) messages.push({ role: 'system', content: [{ type: 'text', text: instructions }] });
  messages.push(...parseInput(body.input));
  if (!messages.some((message) => message.role !== 'system')) throw invalidRequest("'input' must hold at least one message or item besides instructions.", 'input');

  const tools = parseTools(body.tools);
  const text = parseText(body.text);
  const user = optionalString(body, 'user');
  const safetyIdentifier = optionalString(body, 'safety_identifier');
  const request: ChatRequest = {
    model,
    messages,
    maxOutputTokens: optionalInteger(body, 'max_output_tokens', 1),
    temperature: optionalNumber(body, 'temperature', 0, 2),
    topP: optionalNumber(body, 'top_p', 0, 1),
    stop: [],
    stream: optionalBoolean(body, 'stream') ?? false,
    includeUsage: false,
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools),
    parallelToolCalls: optionalBoolean(body, 'parallel_tool_calls'),
    responseFormat: text.format,
    seed: null,
    // Attribution only: `safety_identifier` is what OpenAI now names `user`.
    user: user ?? safetyIdentifier,
    metadata: parseMetadata(body.metadata),
    n: 1,
    ...UNSET_PARAMETERS,
    reasoning,
    verbosity: text.verbosity ?? null,
    // The same parameters as in Chat Completions, judged by the same parameter tables.
    serviceTier: optionalChoice(body, 'service_tier', SERVICE_TIERS),
    promptCacheKey: optionalString(body, 'prompt_cache_key'),
    promptCacheRetention: optionalChoice(body, 'prompt_cache_retention', PROMPT_CACHE_RETENTIONS),
  };
  const echo: ResponsesEcho = {
    instructions,
    textFormat: text.echo,
    // Function tools as the API reports them: every field present, null where the caller sent none.
    tools: ((body.tools as Json[] | undefined | null) ?? []).map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    })),
    toolChoice: (body.tool_choice as ResponsesEcho['toolChoice'] | undefined) ?? 'auto',
    safetyIdentifier,
  };
  rememberEcho(request, echo);
  return request;
}

function optionalChoice(source: Json, key: string, values: readonly string[]): string | null {
  const value = optionalString(source, key);
  if (value !== null && !values.includes(value)) throw invalidRequest(`'${key}' must be one of ${values.join(', ')}.`, key);
  return value;
}

/**
 * `reasoning.effort` → the canonical reasoning request (each provider's parameter table translates it).
 * Reasoning summaries are not produced yet, so `summary` is refused rather than ignored; like OpenAI
 * without a summary, the reasoning itself shows only as output_tokens_details.reasoning_tokens.
 */
function parseReasoning(value: unknown): ChatRequest['reasoning'] {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalidRequest("'reasoning' must be an object.", 'reasoning');
  let effort: ReasoningEffort | null = null;
  for (const [key, item] of Object.entries(value)) {
    if (item === null || item === undefined) continue;
    if (key === 'effort') {
      if (!['minimal', 'low', 'medium', 'high'].includes(item as string)) throw invalidRequest("reasoning.effort must be one of minimal, low, medium, high.", 'reasoning.effort');
      effort = item as ReasoningEffort;
      continue;
    }
    throw unsupportedParameter(`reasoning.${key}`, 'Switchyard cannot produce reasoning summaries yet; remove it.');
  }
  return effort === null ? null : { effort, budgetTokens: null };
}

/**
 * `stream_options.include_obfuscation` pads stream events with random characters against length
 * side channels; Switchyard never pads, so only `false` (or leaving it out) is honoured.
 */
function parseStreamOptions(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) throw invalidRequest("'stream_options' must be an object.", 'stream_options');
  for (const [key, item] of Object.entries(value)) {
    if (item === null || item === undefined || (key === 'include_obfuscation' && item === false)) continue;
    throw unsupportedParameter(`stream_options.${key}`, 'Switchyard does not pad stream events; remove it or send include_obfuscation: false.');
  }
}

function parseInput(value: unknown): ChatMessage[] {
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidRequest("'input' must not be empty.", 'input');
    return [{ role: 'user', content: [{ type: 'text', text: value }] }];
  }
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest("'input' is required: a string or a non-empty array of input items.", 'input');
  const messages: ChatMessage[] = [];
  value.forEach((raw, index) => {
    const param = `input[${index}]`;
    if (!isObject(raw)) throw invalidRequest(`${param} must be an object.`, param);
    const type = raw.type ?? 'message';
    switch (type) {
      case 'message':
        appendMessage(messages, parseMessage(raw, param));
        return;
      case 'function_call':
        appendToolCall(messages, parseFunctionCall(raw, param));
        return;
      case 'function_call_output':
        messages.push(parseFunctionCallOutput(raw, param));
        return;
      default:
        if (typeof type === 'string' && STATEFUL_ITEMS.has(type)) {
          throw unsupportedParameter(
            `${param}.type`,
            `items of type '${type}' refer to state Switchyard does not keep; send the conversation as message, function_call and function_call_output items (clients that reference earlier output by id, such as the Vercel AI SDK, do so with store: false).`,
          );
        }
        throw unsupportedParameter(`${param}.type`, `input items of type '${String(type)}' are not supported (use message, function_call or function_call_output).`);
    }
  });
  return messages;
}

function parseMessage(raw: Json, param: string): ChatMessage {
  switch (raw.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: parseContent(raw.content, `${param}.content`, 'input') };
    case 'user':
      return { role: 'user', content: parseContent(raw.content, `${param}.content`, 'user') };
    case 'assistant':
      return { role: 'assistant', content: parseContent(raw.content, `${param}.content`, 'assistant'), toolCalls: [] };
    default:
      throw invalidRequest(`${param}.role must be one of user, assistant, system, developer.`, `${param}.role`);
  }
}

/** Text and image parts: `input_text`/`input_image` from the caller, `output_text` in earlier assistant turns. */
function parseContent(value: unknown, param: string, speaker: 'user' | 'assistant' | 'input'): ContentPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  if (!Array.isArray(value)) throw invalidRequest(`${param} must be a string or an array of content parts.`, param);
  return value.map((part, index): ContentPart => {
    const partParam = `${param}[${index}]`;
    if (!isObject(part)) throw invalidRequest(`${partParam} must be an object.`, partParam);
    const textType = speaker === 'assistant' ? 'output_text' : 'input_text';
    if (part.type === textType || (speaker === 'assistant' && part.type === 'input_text')) {
      if (typeof part.text !== 'string') throw invalidRequest(`${partParam}.text must be a string.`, `${partParam}.text`);
      return { type: 'text', text: part.text };
    }
    if (part.type === 'input_image') {
      if (speaker !== 'user') throw invalidRequest(`${partParam}: image parts are only allowed in user messages.`, partParam);
      if (part.file_id !== undefined && part.file_id !== null) {
        throw unsupportedParameter(`${partParam}.file_id`, 'uploaded files are not available through Switchyard; send the image as image_url (an https or data: URL).');
      }
      const url = part.image_url;
      if (typeof url !== 'string' || !/^(https?:|data:image\/)/.test(url)) {
        throw invalidRequest(`${partParam}.image_url must be an http(s) URL or a data:image/ URL.`, `${partParam}.image_url`);
      }
      const detail = part.detail ?? null;
      if (detail !== null && !['auto', 'low', 'high'].includes(detail as string)) {
        throw invalidRequest(`${partParam}.detail must be auto, low or high.`, `${partParam}.detail`);
      }
      const mediaType = /^data:(image\/[a-z0-9.+-]+);base64,/i.exec(url)?.[1] ?? null;
      return { type: 'image', url, detail: detail as 'auto' | 'low' | 'high' | null, mediaType };
    }
    if (part.type === 'input_file') {
      if (speaker !== 'user') throw invalidRequest(`${partParam}: file parts are only allowed in user messages.`, partParam);
      return inputFile(part, partParam);
    }
    throw unsupportedParameter(`${partParam}.type`, `content parts of type '${String(part.type)}' are not supported here (use ${textType}${speaker === 'user' ? ', input_image or input_file' : ''}).`);
  });
}

/**
 * `input_file`: exactly one of file_data (a data URL), file_id and file_url, with an optional filename.
 * `detail` (PDF page-image resolution) has no place in the canonical model: only its default is accepted.
 */
function inputFile(part: Json, param: string): ContentPart {
  for (const key of Object.keys(part)) {
    if (['type', 'file_data', 'file_id', 'file_url', 'filename'].includes(key) || part[key] === undefined || part[key] === null) continue;
    if (key === 'detail' && part.detail === 'auto') continue;
    throw unsupportedParameter(`${param}.${key}`, 'input_file takes file_data, file_id, file_url and filename (detail only as auto).');
  }
  const given = ['file_data', 'file_id', 'file_url'].filter((key) => part[key] !== undefined && part[key] !== null);
  if (given.length !== 1) throw invalidRequest(`${param} needs exactly one of file_data, file_id and file_url.`, param);
  const filename = optionalDocumentString(part.filename, `${param}.filename`, 1024);
  const source =
    given[0] === 'file_data' ? fileDataSource(part.file_data, `${param}.file_data`)
      : given[0] === 'file_id' ? { type: 'file_id' as const, fileId: fileIdOf(part.file_id, `${param}.file_id`) }
        : { type: 'url' as const, url: documentUrlOf(part.file_url, `${param}.file_url`) };
  return { type: 'document', source, title: null, context: null, filename, at: param };
}

function parseFunctionCall(raw: Json, param: string): ToolCall {
  if (typeof raw.call_id !== 'string' || raw.call_id.length === 0) throw invalidRequest(`${param}.call_id is required for function_call items.`, `${param}.call_id`);
  if (typeof raw.name !== 'string' || raw.name.length === 0) throw invalidRequest(`${param}.name is required for function_call items.`, `${param}.name`);
  const args = raw.arguments ?? '';
  if (typeof args !== 'string') throw invalidRequest(`${param}.arguments must be a JSON string.`, `${param}.arguments`);
  // Providers that store arguments as an object parse this text: it is bounded like any client-defined value.
  if (jsonTextNestsDeeperThan(args, JSON_LIMITS.valueDepth)) {
    throw invalidRequest(`${param}.arguments nests deeper than ${JSON_LIMITS.valueDepth} levels, the most Switchyard accepts.`, `${param}.arguments`);
  }
  return { id: raw.call_id, name: raw.name, arguments: args };
}

function parseFunctionCallOutput(raw: Json, param: string): ChatMessage {
  if (typeof raw.call_id !== 'string' || raw.call_id.length === 0) {
    throw invalidRequest(`${param}.call_id is required for function_call_output items.`, `${param}.call_id`);
  }
  const output = raw.output;
  if (output === undefined || output === null) throw invalidRequest(`${param}.output is required (a string or input_text parts).`, `${param}.output`);
  return { role: 'tool', toolCallId: raw.call_id, content: parseContent(output, `${param}.output`, 'input') };
}

/** An assistant turn's text and its calls are one canonical message, as every provider format wants them. */
function appendMessage(messages: ChatMessage[], message: ChatMessage): void {
  const last = messages[messages.length - 1];
  if (message.role === 'assistant' && last?.role === 'assistant' && last.toolCalls.length === 0) {
    last.content.push(...message.content);
    return;
  }
  messages.push(message);
}

function appendToolCall(messages: ChatMessage[], call: ToolCall): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') last.toolCalls.push(call);
  else messages.push({ role: 'assistant', content: [], toolCalls: [call] });
}

function parseTools(value: unknown): ToolDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest("'tools' must be an array.", 'tools');
  const names = new Set<string>();
  return value.map((tool, index) => {
    const param = `tools[${index}]`;
    if (!isObject(tool)) throw invalidRequest(`${param} must be an object.`, param);
    if (tool.type !== 'function') {
      throw unsupportedParameter(`${param}.type`, `tools of type '${String(tool.type)}' are not supported (only function tools reach every provider).`);
    }
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) throw invalidRequest(`${param}.name must match ^[a-zA-Z0-9_-]{1,64}$.`, `${param}.name`);
    if (names.has(tool.name)) throw invalidRequest(`${param}.name '${tool.name}' is used twice.`, `${param}.name`);
    names.add(tool.name);
    if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) {
      throw invalidRequest(`${param}.parameters must be a JSON Schema object.`, `${param}.parameters`);
    }
    if (tool.description !== undefined && tool.description !== null && typeof tool.description !== 'string') {
      throw invalidRequest(`${param}.description must be a string.`, `${param}.description`);
    }
    return {
      name: tool.name,
      description: typeof tool.description === 'string' ? tool.description : null,
      parameters: (tool.parameters as Json | undefined | null) ?? { type: 'object', properties: {} },
      strict: typeof tool.strict === 'boolean' ? tool.strict : null,
    };
  });
}

function parseToolChoice(value: unknown, tools: ToolDefinition[]): ToolChoice | null {
  if (value === undefined || value === null) return null;
  if (value === 'auto' || value === 'none' || value === 'required') {
    if (value === 'required' && tools.length === 0) throw invalidRequest("tool_choice 'required' needs tools.", 'tool_choice');
    return { type: value };
  }
  if (isObject(value) && value.type === 'function' && typeof value.name === 'string') {
    const name = value.name;
    if (!tools.some((tool) => tool.name === name)) throw invalidRequest(`tool_choice names '${name}', which is not in 'tools'.`, 'tool_choice');
    return { type: 'tool', name };
  }
  if (isObject(value) && typeof value.type === 'string' && value.type !== 'function') {
    throw unsupportedParameter('tool_choice.type', `tool_choice of type '${value.type}' is not supported (use none, auto, required or {"type": "function", "name": ...}).`);
  }
  throw invalidRequest("'tool_choice' must be 'none', 'auto', 'required' or {\"type\": \"function\", \"name\": ...}.", 'tool_choice');
}

/** `text.format` → canonical response format; the echo is what the response object reports back. */
/**
 * `text.verbosity` is the Responses spelling of Chat Completions' `verbosity`: low and high go to the parameter
 * tables (OpenAI routes pass it, others are ineligible); medium is the default and asks for nothing.
 */
function parseVerbosity(value: Json): ChatRequest['verbosity'] {
  const verbosity = value.verbosity;
  if (verbosity === undefined || verbosity === null || verbosity === 'medium') return null;
  if (verbosity !== 'low' && verbosity !== 'high') throw invalidRequest('text.verbosity must be one of low, medium, high.', 'text.verbosity');
  return verbosity;
}

function parseText(value: unknown): { format: ResponseFormat | null; echo: Json; verbosity?: ChatRequest['verbosity'] } {
  const plain = { type: 'text' };
  if (value === undefined || value === null) return { format: null, echo: plain };
  if (!isObject(value)) throw invalidRequest("'text' must be an object.", 'text');
  for (const [key, item] of Object.entries(value)) {
    if (key === 'format' || key === 'verbosity' || item === null || item === undefined) continue;
    throw unsupportedParameter(`text.${key}`, 'Switchyard cannot honour it on every route; remove it or send its default value.');
  }
  const { format, echo } = parseTextFormat(value, plain);
  return { format, echo, verbosity: parseVerbosity(value) };
}

function parseTextFormat(value: Json, plain: Json): { format: ResponseFormat | null; echo: Json } {
  const format = value.format;
  if (format === undefined || format === null) return { format: null, echo: plain };
  if (!isObject(format)) throw invalidRequest("'text.format' must be an object.", 'text.format');
  if (format.type === 'text') return { format: null, echo: plain };
  if (format.type === 'json_object') return { format: { type: 'json_object' }, echo: { type: 'json_object' } };
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(format.name)) {
      throw invalidRequest("text.format.name is required and must match ^[a-zA-Z0-9_-]{1,64}$.", 'text.format.name');
    }
    if (!isObject(format.schema)) throw invalidRequest("text.format.schema must be a JSON Schema object.", 'text.format.schema');
    const strict = typeof format.strict === 'boolean' ? format.strict : null;
    const description = typeof format.description === 'string' ? format.description : null;
    return {
      format: { type: 'json_schema', name: format.name, schema: format.schema, strict, description },
      echo: { type: 'json_schema', name: format.name, schema: format.schema, strict: strict ?? false, ...(description !== null ? { description } : {}) },
    };
  }
  throw invalidRequest('text.format.type must be text, json_object or json_schema.', 'text.format.type');
}

