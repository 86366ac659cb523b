import { type ChatMessage, type ChatRequest, type ContentPart, type DocumentPart, JSON_LIMITS, jsonTextNestsDeeperThan, toolArgumentsObject, type ToolCall, type ToolChoice } from '../../canonical/index.js';
import { DOCUMENT_FIELDS } from '../parameters/document-support.js';
import { budgetOf } from '../parameters/reasoning-budget.js';
import { SchemaNotRepresentable, toGeminiParameters, toGeminiSchema } from './gemini-schema.js';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequest } from './gemini-wire.js';

/** A request Gemini cannot be sent as is; `param` names the client parameter at fault. */
export class GeminiRequestProblem extends Error {
  override readonly name = 'GeminiRequestProblem';
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Canonical request → Gemini `GenerateContentRequest`. System messages move to `systemInstruction`;
 * assistant turns become role `model`; tool results become `functionResponse` parts of a user turn,
 * named after the call they answer (Gemini matches results by function name, not by call id).
 * Consecutive turns of one role are merged, because Gemini expects the roles to alternate.
 */
export function toGeminiRequest(request: ChatRequest): GeminiRequest {
  const body: GeminiRequest = { contents: [] };
  const system = request.messages.filter((m) => m.role === 'system').flatMap((m) => m.content.filter(isText).map((p) => ({ text: p.text })));
  if (system.length) body.systemInstruction = { parts: system };

  const callNames = new Map<string, string>();
  for (const message of request.messages) {
    if (message.role === 'system') continue;
    if (message.role === 'assistant') for (const call of message.toolCalls) callNames.set(call.id, call.name);
    append(body.contents, toContent(message, callNames));
  }

  if (request.tools.length) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => {
          const parameters = schemaFor('tools', () => toGeminiParameters(tool.parameters));
          return {
            name: tool.name,
            ...(tool.description !== null ? { description: tool.description } : {}),
            ...(parameters ? { parameters } : {}),
          };
        }),
      },
    ];
  }
  if (request.toolChoice) body.toolConfig = { functionCallingConfig: functionCalling(request.toolChoice) };

  const config: GeminiGenerationConfig = {};
  if (request.temperature !== null) config.temperature = request.temperature;
  if (request.topP !== null) config.topP = request.topP;
  if (request.maxOutputTokens !== null) config.maxOutputTokens = request.maxOutputTokens;
  if (request.stop.length) config.stopSequences = request.stop;
  if (request.n > 1) config.candidateCount = request.n;
  if (request.seed !== null) config.seed = request.seed;
  if (request.topK !== null) config.topK = request.topK;
  if (request.presencePenalty !== null) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== null) config.frequencyPenalty = request.frequencyPenalty;
  if (request.logprobs) {
    config.responseLogprobs = true;
    if (request.topLogprobs !== null && request.topLogprobs > 0) config.logprobs = request.topLogprobs;
  }
  // Thought summaries are asked for so the reasoning can be relayed like every other provider's.
  if (request.reasoning !== null) config.thinkingConfig = { thinkingBudget: budgetOf(request.reasoning), includeThoughts: true };
  const format = request.responseFormat;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config.responseSchema = schemaFor('response_format', () => toGeminiSchema(format.schema));
  }
  if (Object.keys(config).length) body.generationConfig = config;
  return body;
}

function toContent(message: Exclude<ChatMessage, { role: 'system' }>, callNames: ReadonlyMap<string, string>): GeminiContent {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: message.content.map(toPart) };
    case 'assistant': {
      const parts: GeminiPart[] = message.content.filter(isText).filter((p) => p.text.length > 0).map((p) => ({ text: p.text }));
      // The call's thought signature goes back on its part exactly as Gemini gave it (Gemini 3 checks it).
      for (const call of message.toolCalls) {
        parts.push({ functionCall: { name: call.name, args: parseArguments(call) }, ...(call.signature ? { thoughtSignature: call.signature } : {}) });
      }
      // Gemini rejects a turn without parts; an empty assistant turn still takes its place in the history.
      return { role: 'model', parts: parts.length ? parts : [{ text: '' }] };
    }
    case 'tool': {
      const name = callNames.get(message.toolCallId);
      if (!name) {
        throw new GeminiRequestProblem('messages', `tool message answers '${message.toolCallId}', which no earlier assistant message called`);
      }
      return { role: 'user', parts: [{ functionResponse: { name, response: functionResponse(message.content, message.isError === true) } }] };
    }
  }
}

function append(contents: GeminiContent[], content: GeminiContent): void {
  const last = contents[contents.length - 1];
  if (last && last.role === content.role) last.parts.push(...content.parts);
  else contents.push(content);
}

function toPart(part: ContentPart): GeminiPart {
  if (part.type === 'text') return { text: part.text };
  if (part.type === 'document') return documentPart(part);
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (inline) return { inlineData: { mimeType: inline[1], data: inline[2] } };
  if (part.url.startsWith('data:')) throw new GeminiRequestProblem('messages', 'Gemini accepts inline images only as base64 data: URLs');
  return { fileData: { mimeType: part.mediaType ?? mimeTypeOf(part.url), fileUri: part.url } };
}

/**
 * A document as inline data with its media type; a text source as text/plain. The documents table keeps
 * URLs (fileData takes only Gemini's own Files API URIs), file ids and custom content from being routed here.
 */
function documentPart(part: DocumentPart): GeminiPart {
  const source = part.source;
  if (source.type === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  if (source.type === 'text') return { inlineData: { mimeType: 'text/plain', data: Buffer.from(source.text, 'utf8').toString('base64') } };
  throw new GeminiRequestProblem(DOCUMENT_FIELDS[source.type === 'file_id' ? 'file_id' : source.type], `Gemini cannot take a ${source.type} document`);
}

/** Gemini needs a MIME type for a file URL; guess it from the extension as its own SDKs do. */
function mimeTypeOf(url: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(pathOf(url))?.[1]?.toLowerCase();
  switch (extension) {
    case 'png':
      return 'image/png';
    case 'webp':
      return 'image/webp';
    case 'gif':
      return 'image/gif';
    case 'heic':
      return 'image/heic';
    case 'heif':
      return 'image/heif';
    default:
      return 'image/jpeg';
  }
}

/**
 * Gemini's `response` is a JSON object: "output" holds the function's result and "error" its failure.
 * A tool result that is itself a JSON object is passed as is.
 */
function functionResponse(content: ContentPart[], isError: boolean): Record<string, unknown> {
  const text = content.filter(isText).map((p) => p.text).join('');
  let value: unknown = text;
  // Text nested deeper than any client-defined value may be stays text: parsed, it could not be serialised again.
  if (!jsonTextNestsDeeperThan(text, JSON_LIMITS.valueDepth)) {
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  if (isError) return { error: value };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return { output: value };
}

function parseArguments(call: ToolCall): Record<string, unknown> {
  const args = toolArgumentsObject(call);
  // Gemini needs the arguments as an object, and guessing one would change the history.
  if (args === null) throw new GeminiRequestProblem('messages', `the arguments of the earlier call to '${call.name}' are not a JSON object`);
  return args;
}

function functionCalling(choice: ToolChoice): NonNullable<GeminiRequest['toolConfig']>['functionCallingConfig'] {
  switch (choice.type) {
    case 'auto':
      return { mode: 'AUTO' };
    case 'none':
      return { mode: 'NONE' };
    case 'required':
      return { mode: 'ANY' };
    case 'tool':
      return { mode: 'ANY', allowedFunctionNames: [choice.name] };
  }
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

function schemaFor<T>(param: string, convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof SchemaNotRepresentable) throw new GeminiRequestProblem(param, error.message);
    throw error;
  }
}

function isText(part: ContentPart): part is Extract<ContentPart, { type: 'text' }> {
  return part.type === 'text';
}
