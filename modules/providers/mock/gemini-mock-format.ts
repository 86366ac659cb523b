import { createHash } from 'node:crypto';
import type { GeminiContent, GeminiPart } from '../gemini/gemini-wire.js';
import { type Frame, MockBadRequest, type MockFormat, type MockRenderContext } from './mock-format.js';
import type { MockInput, MockLogprob } from './mock-script.js';

const ROUTE = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
/** Google's alt=sse streams separate events with CRLF pairs. */
const sse = (payload: unknown): string => `data: ${JSON.stringify(payload)}\r\n\r\n`;

const TOP_LEVEL = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);
const GENERATION_CONFIG = new Set([
  'temperature', 'topP', 'topK', 'maxOutputTokens', 'stopSequences', 'candidateCount', 'seed', 'responseMimeType', 'responseSchema',
  'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig',
]);
/** The OpenAPI Schema subset Gemini accepts; anything else is "Unknown name … Cannot find field". */
const SCHEMA_KEYS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties',
  'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum',
]);
const PART_KINDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'] as const;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

/**
 * The thought signature the mock puts on a function call when thinking is on: derived from the call, in
 * standard base64 (with `+`, `/` and `=` as Gemini's are), so a continuation can be checked without state.
 */
export function mockThoughtSignature(name: string, args: Record<string, unknown>): string {
  return createHash('sha256').update(`${name}:${JSON.stringify(args)}`).digest('base64');
}

/**
 * The mock's Gemini API dialect: `models/{model}:generateContent` and `:streamGenerateContent?alt=sse`.
 * It refuses what the real API refuses (unknown fields and schema keywords, roles other than
 * user/model, a stream without alt=sse, a request without a key), so tests of the adapter's mapping fail
 * the way production would. With thinking on it signs its function calls and, as Gemini 3 does, refuses
 * (400) a history whose function call lacks its signature or carries another one.
 */
export const geminiMockFormat: MockFormat = {
  name: 'gemini',
  streamContentType: 'text/event-stream',

  matches: (method, path) => method === 'POST' && ROUTE.test(path),

  authProblem(headers) {
    if (typeof headers['x-goog-api-key'] === 'string' && headers['x-goog-api-key'].length > 0) return null;
    return { status: 403, message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API." };
  },

  parse(body, path, query): MockInput {
    const [, model, action] = ROUTE.exec(path)!;
    const stream = action === 'streamGenerateContent';
    if (stream && query.get('alt') !== 'sse') throw new MockBadRequest('this mock streams only with alt=sse');
    const request = object(body, 'the request');
    for (const key of Object.keys(request)) if (!TOP_LEVEL.has(key)) throw unknownName(key, '');
    if (!Array.isArray(request.contents) || request.contents.length === 0) throw new MockBadRequest('* GenerateContentRequest.contents: contents is not specified');
    const contents = request.contents.map((content, i) => checkContent(content, `contents[${i}]`));
    const system = request.systemInstruction === undefined ? [] : checkSystem(request.systemInstruction);

    const tools: MockInput['tools'] = [];
    for (const [i, tool] of (Array.isArray(request.tools) ? request.tools : []).entries()) {
      const declarations = object(tool, `tools[${i}]`).functionDeclarations;
      if (!Array.isArray(declarations)) throw new MockBadRequest(`tools[${i}]: functionDeclarations is required`);
      for (const [j, raw] of declarations.entries()) {
        const declaration = object(raw, `tools[${i}].function_declarations[${j}]`);
        if (typeof declaration.name !== 'string' || !declaration.name) throw new MockBadRequest(`tools[${i}].function_declarations[${j}].name is required`);
        const at = `tools[${i}].function_declarations[${j}].parameters`;
        if (declaration.parameters !== undefined) checkSchema(declaration.parameters, at);
        tools.push({ name: declaration.name, parameters: declaration.parameters ? jsonSchemaOf(declaration.parameters) : { type: 'object', properties: {} } });
      }
    }

    const config = request.generationConfig === undefined ? {} : object(request.generationConfig, 'generation_config');
    for (const key of Object.keys(config)) if (!GENERATION_CONFIG.has(key)) throw unknownName(key, 'generation_config');
    if (config.responseSchema !== undefined) checkSchema(config.responseSchema, 'generation_config.response_schema');
    const json = config.responseMimeType === 'application/json';
    // Gemini thinks by default; the mock shows thoughts only when asked for them (includeThoughts), as Gemini does.
    const thinking = (config.thinkingConfig as { includeThoughts?: boolean } | undefined)?.includeThoughts === true;
    if (thinking) contents.forEach(checkThoughtSignatures);

    const calling = (request.toolConfig as { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } } | undefined)?.functionCallingConfig;
    let toolChoice: MockInput['toolChoice'] = 'auto';
    if (calling?.mode === 'NONE') toolChoice = 'none';
    else if (calling?.mode === 'ANY') toolChoice = calling.allowedFunctionNames?.length === 1 ? { name: calling.allowedFunctionNames[0] } : 'required';

    const last = contents[contents.length - 1];
    return {
      model: decodeURIComponent(model),
      stream,
      includeUsage: true, // Gemini reports usage on every answer
      promptText: [...system, ...contents.flatMap((c) => c.parts.map(textOf))].join('\n'),
      tools,
      toolChoice,
      answeringToolResult: last.role === 'user' && last.parts.some((p) => 'functionResponse' in p),
      responseFormat: json ? (config.responseSchema ? { type: 'json_schema', schema: jsonSchemaOf(config.responseSchema) } : { type: 'json_object' }) : null,
      maxTokens: typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : null,
      reasoning: thinking,
      logprobs: config.responseLogprobs === true ? { top: typeof config.logprobs === 'number' ? config.logprobs : 0 } : null,
      cacheBreakpoints: 0,
    };
  },

  buffered(ctx) {
    const { answer } = ctx;
    const parts: GeminiPart[] = answer.toolCall ? [functionCallPart(ctx)] : [{ text: answer.textPieces.join('') }];
    if (answer.reasoningPieces.length) parts.unshift({ text: answer.reasoningPieces.join(''), thought: true });
    return {
      candidates: [{
        content: { role: 'model', parts }, finishReason: finishReasonOf(ctx), index: 0,
        ...(answer.logprobs ? { logprobsResult: logprobsResultOf(answer.logprobs) } : {}),
      }],
      ...(ctx.reportUsage ? { usageMetadata: usageOf(ctx, answer.usage.completion) } : {}),
      modelVersion: ctx.input.model,
      responseId: ctx.id,
    };
  },

  streamStart: () => [],

  reasoningPiece: (ctx, piece) => [frame(ctx, [{ text: piece, thought: true }], 0)],

  reasoningEnd: () => [],

  textPiece: (ctx, piece, index) => [frame(ctx, [{ text: piece }], index + 1, ctx.answer.logprobs ? logprobsResultOf([ctx.answer.logprobs[index]]) : null)],

  /** Gemini streams a function call whole, once its arguments are complete. */
  toolPiece(ctx, _piece, index) {
    if (index < ctx.answer.toolCall!.argumentPieces.length - 1) return [];
    return [frame(ctx, [functionCallPart(ctx)], index + 1)];
  },

  streamEnd(ctx): Frame[] {
    return [
      sse({
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: finishReasonOf(ctx), index: 0 }],
        ...(ctx.reportUsage ? { usageMetadata: usageOf(ctx, ctx.answer.usage.completion) } : {}),
        modelVersion: ctx.input.model,
        responseId: ctx.id,
      }),
    ];
  },

  errorBody: (status, message, retryAfterSeconds) => ({
    error: {
      code: status,
      message,
      status: STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION'),
      ...(status === 429 && retryAfterSeconds != null
        ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` }] }
        : {}),
    },
  }),

  streamError: (message) => [sse({ error: { code: 500, message, status: 'INTERNAL' } })],

  malformedFrame: () => 'data: {"candidates": [{"content": {"parts": [{"text": "cut\r\n\r\n',
};

/** The answer's function call as a part, signed when the request had thinking on. */
function functionCallPart(ctx: MockRenderContext): GeminiPart {
  const call = ctx.answer.toolCall!;
  const args = JSON.parse(call.argumentPieces.join('')) as Record<string, unknown>;
  return { functionCall: { name: call.name, args }, ...(ctx.input.reasoning ? { thoughtSignature: mockThoughtSignature(call.name, args) } : {}) };
}

/** Gemini 3's check: every function call of the model in the history carries the signature it was given. */
function checkThoughtSignatures(content: GeminiContent, i: number): void {
  if (content.role !== 'model') return;
  for (const part of content.parts) {
    if (!('functionCall' in part)) continue;
    const { name, args } = part.functionCall;
    if (part.thoughtSignature === undefined) {
      throw new MockBadRequest(`Function call \`${name}\` in the \`${i}.\` content block is missing a \`thought_signature\`.`);
    }
    if (part.thoughtSignature !== mockThoughtSignature(name, args ?? {})) {
      throw new MockBadRequest(`Function call \`${name}\` in the \`${i}.\` content block has an invalid \`thought_signature\`.`);
    }
  }
}

function frame(ctx: MockRenderContext, parts: GeminiPart[], producedSoFar: number, logprobsResult: unknown = null): string {
  return sse({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(logprobsResult ? { logprobsResult } : {}) }],
    ...(ctx.reportUsage ? { usageMetadata: usageOf(ctx, producedSoFar) } : {}),
    modelVersion: ctx.input.model,
    responseId: ctx.id,
  });
}

/** Gemini counts thoughts apart from the visible output (candidatesTokenCount). */
function usageOf(ctx: MockRenderContext, candidates: number) {
  const { prompt, cached, reasoning } = ctx.answer.usage;
  const visible = Math.max(0, candidates - (candidates === ctx.answer.usage.completion ? reasoning : 0));
  return Object.assign({
    promptTokenCount: prompt,
    candidatesTokenCount: visible,
    totalTokenCount: prompt + visible + reasoning,
    ...(reasoning > 0 ? { thoughtsTokenCount: reasoning } : {}),
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
  }, ctx.usageFields);
}

function logprobsResultOf(entries: MockLogprob[]) {
  return {
    chosenCandidates: entries.map((e) => ({ token: e.token, logProbability: e.logprob })),
    topCandidates: entries.map((e) => ({ candidates: e.top.map((t) => ({ token: t.token, logProbability: t.logprob })) })),
  };
}

function finishReasonOf(ctx: MockRenderContext): string {
  return ctx.answer.finishReason === 'length' ? 'MAX_TOKENS' : 'STOP';
}

function checkContent(raw: unknown, at: string): GeminiContent {
  const content = object(raw, at);
  if (content.role !== 'user' && content.role !== 'model') throw new MockBadRequest(`* GenerateContentRequest.${at}.role: Please use a valid role: user, model.`);
  if (!Array.isArray(content.parts) || content.parts.length === 0) throw new MockBadRequest(`* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`);
  for (const [i, part] of content.parts.entries()) checkPart(part, `${at}.parts[${i}]`);
  return content as unknown as GeminiContent;
}

function checkPart(raw: unknown, at: string): void {
  const part = object(raw, at);
  const kinds = PART_KINDS.filter((kind) => part[kind] !== undefined);
  if (kinds.length !== 1) throw new MockBadRequest(`* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field`);
  for (const key of Object.keys(part)) if (!(PART_KINDS as readonly string[]).includes(key) && key !== 'thought' && key !== 'thoughtSignature') throw unknownName(key, at);
  const inline = part.inlineData as { mimeType?: unknown; data?: unknown } | undefined;
  if (inline && (typeof inline.mimeType !== 'string' || typeof inline.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(inline.data))) {
    throw new MockBadRequest(`* GenerateContentRequest.${at}.inline_data: mime_type and base64 data are required`);
  }
  const file = part.fileData as { mimeType?: unknown; fileUri?: unknown } | undefined;
  if (file && (typeof file.mimeType !== 'string' || typeof file.fileUri !== 'string')) throw new MockBadRequest(`* GenerateContentRequest.${at}.file_data: mime_type and file_uri are required`);
  const response = part.functionResponse as { name?: unknown; response?: unknown } | undefined;
  if (response && (typeof response.name !== 'string' || !response.name || typeof response.response !== 'object' || response.response === null || Array.isArray(response.response))) {
    throw new MockBadRequest(`* GenerateContentRequest.${at}.function_response: name and a response object are required`);
  }
  const call = part.functionCall as { name?: unknown; args?: unknown } | undefined;
  if (call && (typeof call.name !== 'string' || (call.args !== undefined && (typeof call.args !== 'object' || Array.isArray(call.args))))) {
    throw new MockBadRequest(`* GenerateContentRequest.${at}.function_call: name is required and args must be an object`);
  }
}

function checkSystem(raw: unknown): string[] {
  const system = object(raw, 'system_instruction');
  if (!Array.isArray(system.parts) || system.parts.length === 0) throw new MockBadRequest('* GenerateContentRequest.system_instruction.parts: must not be empty');
  return system.parts.map((part, i) => {
    const text = object(part, `system_instruction.parts[${i}]`).text;
    if (typeof text !== 'string') throw new MockBadRequest(`* GenerateContentRequest.system_instruction.parts[${i}]: only text is supported`);
    return text;
  });
}

function checkSchema(raw: unknown, at: string): void {
  const schema = object(raw, at);
  for (const key of Object.keys(schema)) if (!SCHEMA_KEYS.has(key)) throw unknownName(key, at);
  if (schema.properties !== undefined) {
    const properties = object(schema.properties, `${at}.properties`);
    if (Object.keys(properties).length === 0) throw new MockBadRequest(`* GenerateContentRequest.${at}.properties: should be non-empty for OBJECT type`);
    for (const [name, child] of Object.entries(properties)) checkSchema(child, `${at}.properties[${name}]`);
  }
  if (schema.items !== undefined) checkSchema(schema.items, `${at}.items`);
  if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((branch, i) => checkSchema(branch, `${at}.any_of[${i}]`));
}

/** Gemini's upper-case schema types back to JSON Schema, so the mock can fill in a sample answer. */
function jsonSchemaOf(raw: unknown): Record<string, unknown> {
  const schema = raw as Record<string, unknown>;
  const out: Record<string, unknown> = { ...schema };
  if (typeof schema.type === 'string') out.type = schema.type.toLowerCase();
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, unknown>).map(([k, v]) => [k, jsonSchemaOf(v)]));
  if (schema.items) out.items = jsonSchemaOf(schema.items);
  return out;
}

function textOf(part: GeminiPart): string {
  if ('text' in part) return part.text;
  if ('functionResponse' in part) return JSON.stringify(part.functionResponse.response);
  if ('functionCall' in part) return JSON.stringify(part.functionCall.args ?? {});
  return '';
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MockBadRequest(`* GenerateContentRequest.${at}: must be an object`);
  return value as Record<string, unknown>;
}

function unknownName(key: string, at: string): MockBadRequest {
  return new MockBadRequest(`Invalid JSON payload received. Unknown name "${key}"${at ? ` at '${at}'` : ''}: Cannot find field.`);
}
