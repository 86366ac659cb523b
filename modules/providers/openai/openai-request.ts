import { type ChatMessage, type ChatRequest, type ContentPart, type DocumentPart, documentText } from '../../canonical/index.js';
import { effortOf } from '../parameters/reasoning-budget.js';
import type { OpenAiContentPart, OpenAiMessage } from './openai-wire.js';

export interface OpenAiRequestOptions {
  /** The provider's model id (or, for Azure, omitted because the path names the deployment). */
  model: string | null;
  /** `max_completion_tokens` (OpenAI's current name) or `max_tokens` (what self-hosted servers accept). */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  stream: boolean;
}

/** Canonical request → OpenAI Chat Completions JSON body. Usage is always requested on streams. */
export function toOpenAiRequest(request: ChatRequest, options: OpenAiRequestOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (options.model) body.model = options.model;
  body.messages = request.messages.map(toOpenAiMessage);
  if (request.maxOutputTokens !== null) body[options.maxTokensField] = request.maxOutputTokens;
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.topP !== null) body.top_p = request.topP;
  if (request.stop.length) body.stop = request.stop;
  if (request.seed !== null) body.seed = request.seed;
  if (request.user !== null) body.user = request.user;
  if (request.n > 1) body.n = request.n;
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== null ? { description: tool.description } : {}),
        parameters: tool.parameters,
        ...(tool.strict !== null ? { strict: tool.strict } : {}),
      },
    }));
  }
  if (request.toolChoice) {
    body.tool_choice = request.toolChoice.type === 'tool' ? { type: 'function', function: { name: request.toolChoice.name } } : request.toolChoice.type;
  }
  if (request.parallelToolCalls !== null) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.responseFormat) {
    const format = request.responseFormat;
    body.response_format =
      format.type === 'json_schema'
        ? {
            type: 'json_schema',
            json_schema: {
              name: format.name,
              schema: format.schema,
              ...(format.strict !== null ? { strict: format.strict } : {}),
              ...(format.description !== null ? { description: format.description } : {}),
            },
          }
        : { type: format.type };
  }
  // The parameter table passes these under their own names (or refused the route before this point).
  if (request.frequencyPenalty !== null) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== null) body.presence_penalty = request.presencePenalty;
  if (request.logitBias !== null) body.logit_bias = request.logitBias;
  if (request.logprobs) body.logprobs = true;
  if (request.topLogprobs !== null && request.logprobs) body.top_logprobs = request.topLogprobs;
  if (request.topK !== null) body.top_k = request.topK;
  if (request.reasoning !== null) body.reasoning_effort = effortOf(request.reasoning);
  if (request.verbosity !== null) body.verbosity = request.verbosity;
  if (request.serviceTier !== null) body.service_tier = request.serviceTier;
  if (request.metadata !== null) body.metadata = request.metadata;
  if (request.safetyIdentifier !== null) body.safety_identifier = request.safetyIdentifier;
  if (request.promptCacheKey !== null) body.prompt_cache_key = request.promptCacheKey;
  // in_memory is the default lifetime: only 24h needs saying (and only OpenAI's table lets it through).
  if (request.promptCacheRetention !== null && request.promptCacheRetention !== 'in_memory') body.prompt_cache_retention = request.promptCacheRetention;
  if (request.store !== null) body.store = request.store;
  if (request.modalities !== null) body.modalities = request.modalities;
  if (request.prediction !== null) body.prediction = request.prediction;
  if (options.stream) {
    body.stream = true;
    // Always ask for usage so every stream can be billed; the client format strips it if not requested.
    body.stream_options = { include_usage: true };
  }
  return body;
}

function toOpenAiMessage(message: ChatMessage): OpenAiMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: joinText(message.content) };
    case 'user':
      return { role: 'user', content: toContent(message.content), ...(message.name ? { name: message.name } : {}) };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content.length ? joinText(message.content) : null,
        // Earlier reasoning is not sent back: Chat Completions has no field for it (DeepSeek refuses
        // reasoning_content in input), and the models do not use their past reasoning.
        ...(message.toolCalls.length
          ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: joinText(message.content) };
  }
}

function toContent(parts: ContentPart[]): string | OpenAiContentPart[] {
  if (parts.every((part) => part.type === 'text')) return joinText(parts);
  return parts.map((part): OpenAiContentPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'document') return documentPart(part);
    return { type: 'image_url', image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) } };
  });
}

/**
 * A PDF as a file part (a data URL, or the OpenAI file id as sent); a text document as a text part, which
 * is what OpenAI's guide says to do with text in Chat Completions. The documents table keeps every other
 * kind from being routed here.
 */
function documentPart(part: DocumentPart): OpenAiContentPart {
  const source = part.source;
  const filename = part.filename ?? part.title;
  if (source.type === 'file_id') return { type: 'file', file: { file_id: source.fileId, ...(filename !== null ? { filename } : {}) } };
  if (source.type === 'base64' && source.mediaType === 'application/pdf') {
    return { type: 'file', file: { file_data: `data:application/pdf;base64,${source.data}`, filename: filename ?? 'document.pdf' } };
  }
  const text = documentText(part);
  if (text !== null) return { type: 'text', text };
  throw new Error(`a ${source.type} document cannot be sent as a Chat Completions part`);
}

function joinText(parts: ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

