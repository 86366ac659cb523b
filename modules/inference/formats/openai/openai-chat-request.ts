import {
  assertJsonWithinBounds, type ChatMessage, type ChatRequest, type ContentPart, invalidRequest, JSON_LIMITS, type JsonShape, jsonTextNestsDeeperThan,
  type ReasoningPart, type ResponseFormat, type ToolCall, type ToolChoice, type ToolDefinition, UNSET_PARAMETERS, unsupportedParameter,
} from '../../../canonical/index.js';
import { type Json, isNeutralValue, isObject, optionalBoolean, optionalInteger, optionalNumber, optionalString, parseMetadata } from '../body-fields.js';
import { fileDataSource, fileIdOf, optionalDocumentString } from '../document-fields.js';

/**
 * Every parameter Switchyard parses. Whether a route can honour one is the provider's parameter table's
 * call (modules/providers/parameters), made at routing time: parsing never refuses a known parameter.
 * `top_k` is not OpenAI's, but OpenAI-compatible clients send it for vLLM/Ollama-style servers.
 */
const KNOWN = new Set([
  'model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'stream', 'stream_options',
  'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'seed', 'user', 'metadata', 'n',
  'frequency_penalty', 'presence_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'top_k', 'reasoning_effort', 'verbosity',
  'service_tier', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'store', 'modalities', 'prediction',
]);
/** Accepted with these values only: what SDKs send by default and what changes nothing. */
const NEUTRAL_VALUES: ReadonlyMap<string, readonly unknown[]> = new Map<string, unknown[]>([]);
const EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
const VERBOSITY = ['low', 'medium', 'high'] as const;
const PROMPT_CACHE_RETENTIONS = ['in_memory', '24h'] as const;
const SERVICE_TIERS = ['auto', 'default', 'flex', 'priority', 'scale'];
/** Where the body holds client-defined JSON: the bounds allow deeper nesting there, and any key name. */
export const OPENAI_CHAT_SHAPE: JsonShape = {
  pathStyle: 'brackets',
  freeForm: [['tools', '*', 'function', 'parameters'], ['response_format', 'json_schema', 'schema'], ['response_format', 'schema']],
};
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;


/** OpenAI Chat Completions body → canonical request. Every problem is a 400 naming the parameter. */
export function parseOpenAiChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw invalidRequest('The request body must be a JSON object.');
  assertJsonWithinBounds(body, OPENAI_CHAT_SHAPE);
  for (const [key, value] of Object.entries(body)) {
    if (KNOWN.has(key) || isNeutralValue(NEUTRAL_VALUES, key, value)) continue;
    throw unsupportedParameter(key, 'Switchyard does not support it; remove it or send its default value.');
  }
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest("'model' is required and must be a string.", 'model');

  const stream = optionalBoolean(body, 'stream') ?? false;
  let includeUsage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!stream) throw invalidRequest("'stream_options' is only allowed when 'stream' is true.", 'stream_options');
    if (!isObject(body.stream_options)) throw invalidRequest("'stream_options' must be an object.", 'stream_options');
    includeUsage = optionalBoolean(body.stream_options, 'include_usage', 'stream_options.include_usage') ?? false;
  }

  const maxTokens = optionalInteger(body, 'max_tokens', 1);
  const maxCompletionTokens = optionalInteger(body, 'max_completion_tokens', 1);
  if (maxTokens !== null && maxCompletionTokens !== null && maxTokens !== maxCompletionTokens) {
    throw invalidRequest("'max_tokens' and 'max_completion_tokens' disagree; send only one of them.", 'max_completion_tokens');
  }

  const tools = parseTools(body.tools);
  return {
    model,
    messages: parseMessages(body.messages),
    maxOutputTokens: maxCompletionTokens ?? maxTokens,
    temperature: optionalNumber(body, 'temperature', 0, 2),
    topP: optionalNumber(body, 'top_p', 0, 1),
    stop: parseStop(body.stop),
    stream,
    includeUsage,
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools),
    parallelToolCalls: optionalBoolean(body, 'parallel_tool_calls'),
    responseFormat: parseResponseFormat(body.response_format),
    seed: optionalInteger(body, 'seed', Number.MIN_SAFE_INTEGER),
    user: optionalString(body, 'user'),
    metadata: parseMetadata(body.metadata),
    n: optionalInteger(body, 'n', 1, 128) ?? 1,
    ...UNSET_PARAMETERS,
    ...parseExtendedParameters(body),
  };
}

/** The parameters whose handling differs per provider format (issue 11): parsed here, judged by routing. */
function parseExtendedParameters(body: Json): Partial<ChatRequest> {
  const logprobs = optionalBoolean(body, 'logprobs') ?? false;
  const topLogprobs = optionalInteger(body, 'top_logprobs', 0, 20);
  if (topLogprobs !== null && topLogprobs > 0 && !logprobs) throw invalidRequest("'top_logprobs' needs 'logprobs': true.", 'top_logprobs');
  const effort = optionalEnum(body, 'reasoning_effort', EFFORTS);
  const serviceTier = optionalString(body, 'service_tier');
  if (serviceTier !== null && !SERVICE_TIERS.includes(serviceTier)) throw invalidRequest(`'service_tier' must be one of ${SERVICE_TIERS.join(', ')}.`, 'service_tier');
  return {
    frequencyPenalty: optionalNumber(body, 'frequency_penalty', -2, 2),
    presencePenalty: optionalNumber(body, 'presence_penalty', -2, 2),
    logitBias: parseLogitBias(body.logit_bias),
    logprobs,
    topLogprobs,
    topK: optionalInteger(body, 'top_k', 1),
    reasoning: effort === null ? null : { effort, budgetTokens: null },
    verbosity: optionalEnum(body, 'verbosity', VERBOSITY),
    serviceTier,
    safetyIdentifier: optionalString(body, 'safety_identifier'),
    promptCacheKey: optionalString(body, 'prompt_cache_key'),
    promptCacheRetention: optionalEnum(body, 'prompt_cache_retention', PROMPT_CACHE_RETENTIONS),
    store: optionalBoolean(body, 'store'),
    modalities: parseModalities(body.modalities),
    prediction: parsePrediction(body.prediction),
  };
}

function parseLogitBias(value: unknown): Record<string, number> | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalidRequest("'logit_bias' must be an object mapping token ids to numbers.", 'logit_bias');
  for (const [token, bias] of Object.entries(value)) {
    if (!/^\d+$/.test(token) || typeof bias !== 'number' || !Number.isFinite(bias) || bias < -100 || bias > 100) {
      throw invalidRequest("'logit_bias' maps token ids (integers) to biases from -100 to 100.", `logit_bias.${token}`);
    }
  }
  return Object.keys(value).length ? (value as Record<string, number>) : null;
}

function parseModalities(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || !value.every((m) => m === 'text' || m === 'audio')) {
    throw invalidRequest("'modalities' must be a non-empty array of 'text' and 'audio'.", 'modalities');
  }
  return value as string[];
}

function parsePrediction(value: unknown): ChatRequest['prediction'] {
  if (value === undefined || value === null) return null;
  if (!isObject(value) || value.type !== 'content') throw invalidRequest("'prediction' must be {\"type\": \"content\", \"content\": ...}.", 'prediction');
  const content = value.content;
  if (typeof content === 'string') return { type: 'content', content };
  if (Array.isArray(content) && content.every((p) => isObject(p) && p.type === 'text' && typeof p.text === 'string')) {
    return { type: 'content', content: content.map((p) => (p as { text: string }).text).join('') };
  }
  throw invalidRequest("'prediction.content' must be a string or an array of text parts.", 'prediction.content');
}

function optionalEnum<T extends string>(source: Json, key: string, values: readonly T[]): T | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) throw invalidRequest(`'${key}' must be one of ${values.join(', ')}.`, key);
  return value as T;
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest("'messages' must be a non-empty array.", 'messages');
  return value.map((raw, index): ChatMessage => {
    const param = `messages[${index}]`;
    if (!isObject(raw)) throw invalidRequest(`${param} must be an object.`, param);
    switch (raw.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: parseContent(raw.content, `${param}.content`, false) };
      case 'user':
        return {
          role: 'user',
          content: parseContent(raw.content, `${param}.content`, true),
          ...(typeof raw.name === 'string' ? { name: raw.name } : {}),
        };
      case 'assistant': {
        const toolCalls = parseToolCalls(raw.tool_calls, `${param}.tool_calls`);
        const content = raw.content === null || raw.content === undefined ? [] : parseContent(raw.content, `${param}.content`, false);
        const reasoning = parseReasoningHistory(raw, param);
        if (content.length === 0 && toolCalls.length === 0 && reasoning.length === 0) throw invalidRequest(`${param} needs content or tool_calls.`, `${param}.content`);
        return { role: 'assistant', content, toolCalls, ...(reasoning.length ? { reasoning } : {}) };
      }
      case 'tool':
        if (typeof raw.tool_call_id !== 'string' || !raw.tool_call_id) {
          throw invalidRequest(`${param}.tool_call_id is required for tool messages.`, `${param}.tool_call_id`);
        }
        return { role: 'tool', toolCallId: raw.tool_call_id, content: parseContent(raw.content, `${param}.content`, false) };
      default:
        throw invalidRequest(`${param}.role must be one of system, developer, user, assistant, tool.`, `${param}.role`);
    }
  });
}

/**
 * Earlier reasoning on an assistant message: `thinking_blocks` (LiteLLM's field, with the signatures an
 * Anthropic or Bedrock route verifies), else `reasoning_content` as unsigned text.
 */
function parseReasoningHistory(raw: Json, param: string): ReasoningPart[] {
  if (Array.isArray(raw.thinking_blocks)) {
    return raw.thinking_blocks.map((block, i): ReasoningPart => {
      const at = `${param}.thinking_blocks[${i}]`;
      if (isObject(block) && block.type === 'thinking' && typeof block.thinking === 'string') {
        if (block.signature !== undefined && block.signature !== null && typeof block.signature !== 'string') throw invalidRequest(`${at}.signature must be a string.`, `${at}.signature`);
        return { type: 'thinking', text: block.thinking, signature: (block.signature as string | undefined) ?? null };
      }
      if (isObject(block) && block.type === 'redacted_thinking' && typeof block.data === 'string') return { type: 'redacted_thinking', data: block.data };
      throw invalidRequest(`${at} must be a thinking block {type, thinking, signature} or {type: "redacted_thinking", data}.`, at);
    });
  }
  if (raw.thinking_blocks !== undefined && raw.thinking_blocks !== null) throw invalidRequest(`${param}.thinking_blocks must be an array.`, `${param}.thinking_blocks`);
  const text = raw.reasoning_content;
  if (text === undefined || text === null) return [];
  if (typeof text !== 'string') throw invalidRequest(`${param}.reasoning_content must be a string.`, `${param}.reasoning_content`);
  return text.length ? [{ type: 'thinking', text, signature: null }] : [];
}

function parseContent(value: unknown, param: string, allowImages: boolean): ContentPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  if (!Array.isArray(value)) throw invalidRequest(`${param} must be a string or an array of content parts.`, param);
  return value.map((part, index): ContentPart => {
    const partParam = `${param}[${index}]`;
    if (!isObject(part)) throw invalidRequest(`${partParam} must be an object.`, partParam);
    if (part.type === 'text') {
      if (typeof part.text !== 'string') throw invalidRequest(`${partParam}.text must be a string.`, `${partParam}.text`);
      return { type: 'text', text: part.text };
    }
    if (part.type === 'image_url') {
      if (!allowImages) throw invalidRequest(`${partParam}: image parts are only allowed in user messages.`, partParam);
      const image = part.image_url;
      if (!isObject(image) || typeof image.url !== 'string' || !/^(https?:|data:image\/)/.test(image.url)) {
        throw invalidRequest(`${partParam}.image_url.url must be an http(s) URL or a data:image/ URL.`, `${partParam}.image_url.url`);
      }
      const detail = image.detail ?? null;
      if (detail !== null && !['auto', 'low', 'high'].includes(detail as string)) {
        throw invalidRequest(`${partParam}.image_url.detail must be auto, low or high.`, `${partParam}.image_url.detail`);
      }
      const mediaType = /^data:(image\/[a-z0-9.+-]+);base64,/i.exec(image.url)?.[1] ?? null;
      return { type: 'image', url: image.url, detail: detail as 'auto' | 'low' | 'high' | null, mediaType };
    }
    if (part.type === 'file') {
      if (!allowImages) throw invalidRequest(`${partParam}: file parts are only allowed in user messages.`, partParam);
      return filePart(part.file, `${partParam}.file`, partParam);
    }
    throw unsupportedParameter(`${partParam}.type`, `content parts of type '${String(part.type)}' are not supported (use text, image_url or file).`);
  });
}

/** `{type: "file", file: {file_data | file_id, filename}}`: exactly one of the data (a data URL) and an uploaded file's id. */
function filePart(file: unknown, param: string, at: string): ContentPart {
  if (!isObject(file)) throw invalidRequest(`${param} must be an object with file_data or file_id.`, param);
  for (const key of Object.keys(file)) {
    if (!['file_data', 'file_id', 'filename'].includes(key) && file[key] !== undefined && file[key] !== null) {
      throw unsupportedParameter(`${param}.${key}`, 'file parts take file_data, file_id and filename.');
    }
  }
  const hasData = file.file_data !== undefined && file.file_data !== null;
  const hasId = file.file_id !== undefined && file.file_id !== null;
  if (hasData === hasId) throw invalidRequest(`${param} needs exactly one of file_data and file_id.`, param);
  const filename = optionalDocumentString(file.filename, `${param}.filename`, 1024);
  const source = hasData ? fileDataSource(file.file_data, `${param}.file_data`) : { type: 'file_id' as const, fileId: fileIdOf(file.file_id, `${param}.file_id`) };
  return { type: 'document', source, title: null, context: null, filename, at };
}

function parseToolCalls(value: unknown, param: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest(`${param} must be an array.`, param);
  return value.map((call, index) => {
    const callParam = `${param}[${index}]`;
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function) || typeof call.function.name !== 'string') {
      throw invalidRequest(`${callParam} must have an id and a function with a name.`, callParam);
    }
    const args = call.function.arguments ?? '';
    if (typeof args !== 'string') throw invalidRequest(`${callParam}.function.arguments must be a JSON string.`, `${callParam}.function.arguments`);
    // Providers that store arguments as an object parse this text: it is bounded like any client-defined value.
    if (jsonTextNestsDeeperThan(args, JSON_LIMITS.valueDepth)) {
      throw invalidRequest(`${callParam}.function.arguments nests deeper than ${JSON_LIMITS.valueDepth} levels, the most Switchyard accepts.`, `${callParam}.function.arguments`);
    }
    return { id: call.id, name: call.function.name, arguments: args };
  });
}

function parseTools(value: unknown): ToolDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest("'tools' must be an array.", 'tools');
  const names = new Set<string>();
  return value.map((tool, index) => {
    const param = `tools[${index}]`;
    if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function)) {
      throw invalidRequest(`${param} must be {"type": "function", "function": {...}}.`, param);
    }
    const fn = tool.function;
    if (typeof fn.name !== 'string' || !TOOL_NAME.test(fn.name)) {
      throw invalidRequest(`${param}.function.name must match ^[a-zA-Z0-9_-]{1,64}$.`, `${param}.function.name`);
    }
    if (names.has(fn.name)) throw invalidRequest(`${param}.function.name '${fn.name}' is used twice.`, `${param}.function.name`);
    names.add(fn.name);
    if (fn.parameters !== undefined && !isObject(fn.parameters)) {
      throw invalidRequest(`${param}.function.parameters must be a JSON Schema object.`, `${param}.function.parameters`);
    }
    return {
      name: fn.name,
      description: typeof fn.description === 'string' ? fn.description : null,
      parameters: (fn.parameters as Json | undefined) ?? { type: 'object', properties: {} },
      strict: typeof fn.strict === 'boolean' ? fn.strict : null,
    };
  });
}

function parseToolChoice(value: unknown, tools: ToolDefinition[]): ToolChoice | null {
  if (value === undefined || value === null) return null;
  if (value === 'auto' || value === 'none' || value === 'required') {
    if (value === 'required' && tools.length === 0) throw invalidRequest("tool_choice 'required' needs tools.", 'tool_choice');
    return { type: value };
  }
  if (isObject(value) && value.type === 'function' && isObject(value.function) && typeof value.function.name === 'string') {
    const name = value.function.name;
    if (!tools.some((tool) => tool.name === name)) throw invalidRequest(`tool_choice names '${name}', which is not in 'tools'.`, 'tool_choice');
    return { type: 'tool', name };
  }
  throw invalidRequest("'tool_choice' must be 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": ...}}.", 'tool_choice');
}

function parseResponseFormat(value: unknown): ResponseFormat | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw invalidRequest("'response_format' must be an object.", 'response_format');
  if (value.type === 'text') return null;
  if (value.type === 'json_object') {
    for (const key of Object.keys(value)) {
      if (key !== 'type' && key !== 'schema' && value[key] !== undefined && value[key] !== null) {
        throw unsupportedParameter(`response_format.${key}`, 'Switchyard does not support it; remove it.');
      }
    }
    // Together/Fireworks/Anyscale's JSON mode with a schema (Instructor's JSON_SCHEMA mode sends it): the schema is
    // the point of the request, so it becomes a json_schema request rather than being dropped with plain JSON mode.
    if (value.schema !== undefined && value.schema !== null) {
      if (!isObject(value.schema)) throw invalidRequest("response_format.schema must be a JSON Schema object.", 'response_format.schema');
      const title = value.schema.title;
      const name = typeof title === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(title) ? title : 'response';
      return { type: 'json_schema', name, schema: value.schema, strict: null, description: null };
    }
    return { type: 'json_object' };
  }
  if (value.type === 'json_schema') {
    const spec = value.json_schema;
    if (!isObject(spec) || typeof spec.name !== 'string' || !isObject(spec.schema)) {
      throw invalidRequest("response_format.json_schema needs a 'name' and a 'schema' object.", 'response_format.json_schema');
    }
    return {
      type: 'json_schema',
      name: spec.name,
      schema: spec.schema,
      strict: typeof spec.strict === 'boolean' ? spec.strict : null,
      description: typeof spec.description === 'string' ? spec.description : null,
    };
  }
  throw invalidRequest("response_format.type must be text, json_object or json_schema.", 'response_format.type');
}

function parseStop(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length <= 4 && value.every((item) => typeof item === 'string')) return value as string[];
  throw invalidRequest("'stop' must be a string or an array of at most 4 strings.", 'stop');
}

