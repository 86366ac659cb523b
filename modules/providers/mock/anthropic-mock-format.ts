import { type Frame, MockBadRequest, type MockFormat, type MockRenderContext } from './mock-format.js';
import { type MockInput, mockSignature } from './mock-script.js';

const event = (name: string, payload: unknown): string => `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`;

type Json = Record<string, unknown>;

/**
 * The mock's Anthropic Messages dialect: `POST /v1/messages` with Anthropic's request shape (required
 * `max_tokens`, top-level `system`, `input_schema` tools, tool_result blocks), answers as `message`
 * JSON or as the typed SSE event sequence, errors in `{type: "error", error: {...}}`, and in-stream
 * failures as `event: error`. Like Anthropic, `input_tokens` excludes cache reads.
 */
export const anthropicMockFormat: MockFormat = {
  name: 'anthropic',
  streamContentType: 'text/event-stream',

  matches: (method, path) => method === 'POST' && /\/v1\/messages$/.test(path),

  // Anthropic refuses a call without its key or its version header, before reading the body.
  authProblem(headers) {
    if (typeof headers['x-api-key'] !== 'string' || headers['x-api-key'].length === 0) return { status: 401, message: 'x-api-key header is required' };
    if (typeof headers['anthropic-version'] !== 'string') return { status: 400, message: 'anthropic-version: header is required' };
    return null;
  },

  parse(body): MockInput {
    const request = body as Json;
    if (!request || typeof request !== 'object') throw new MockBadRequest('the body must be a JSON object');
    if (typeof request.model !== 'string' || !request.model) throw new MockBadRequest('model: Field required');
    if (typeof request.max_tokens !== 'number') throw new MockBadRequest('max_tokens: Field required');
    if (!Array.isArray(request.messages) || request.messages.length === 0) throw new MockBadRequest('messages: Field required');
    const messages = request.messages as Array<{ role: string; content: unknown }>;
    for (const [i, message] of messages.entries()) {
      if (message.role !== 'user' && message.role !== 'assistant') throw new MockBadRequest(`messages.${i}.role: must be user or assistant`);
      if (i > 0 && messages[i - 1].role === message.role) throw new MockBadRequest(`messages.${i}: roles must alternate between user and assistant`);
    }
    const tools = Array.isArray(request.tools)
      ? (request.tools as Array<{ name: string; input_schema?: Json }>).map((t) => ({ name: t.name, parameters: t.input_schema ?? { type: 'object', properties: {} } }))
      : [];
    const choice = request.tool_choice as { type?: string; name?: string } | undefined;
    const last = messages[messages.length - 1];
    const system = typeof request.system === 'string' ? request.system : Array.isArray(request.system) ? textOf(request.system) : '';
    const outputFormat = (request.output_config as { format?: { type?: string; schema?: Record<string, unknown> } } | undefined)?.format;
    if (outputFormat !== undefined && (outputFormat.type !== 'json_schema' || typeof outputFormat.schema !== 'object' || outputFormat.schema === null)) {
      throw new MockBadRequest('output_config.format: must be {type: "json_schema", schema}');
    }
    const thinking = request.thinking as { type?: string; budget_tokens?: unknown } | undefined;
    const reasoning = thinking?.type === 'enabled';
    if (reasoning) {
      if (typeof thinking.budget_tokens !== 'number' || thinking.budget_tokens < 1024) throw new MockBadRequest('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (thinking.budget_tokens >= request.max_tokens) throw new MockBadRequest('`max_tokens` must be greater than `thinking.budget_tokens`');
      checkThinkingHistory(messages);
    }
    return {
      model: request.model,
      stream: request.stream === true,
      includeUsage: true, // Anthropic streams always carry usage
      promptText: [system, ...messages.map((m) => textOf(m.content))].filter((t) => t.length > 0).join('\n'),
      tools,
      toolChoice:
        choice?.type === 'tool' && choice.name ? { name: choice.name } : choice?.type === 'none' ? 'none' : choice?.type === 'any' ? 'required' : 'auto',
      answeringToolResult: last.role === 'user' && Array.isArray(last.content) && last.content.some((b: Json) => b?.type === 'tool_result'),
      responseFormat: outputFormat ? { type: 'json_schema', schema: outputFormat.schema! } : null,
      maxTokens: request.max_tokens,
      reasoning,
      logprobs: null,
      cacheBreakpoints: countCacheControl(request),
      stop: Array.isArray(request.stop_sequences) ? (request.stop_sequences as string[]) : [],
    };
  },

  buffered({ id, input, answer, reportUsage, usageFields }) {
    const content: Json[] = answer.toolCall
      ? [{ type: 'tool_use', id: toolId(answer.toolCall.id), name: answer.toolCall.name, input: JSON.parse(answer.toolCall.argumentPieces.join('')) }]
      : [{ type: 'text', text: answer.textPieces.join('') }];
    if (answer.reasoningPieces.length) content.unshift({ type: 'thinking', thinking: answer.reasoningPieces.join(''), signature: answer.signature });
    return {
      id: messageId(id),
      type: 'message',
      role: 'assistant',
      model: input.model,
      content,
      stop_reason: answer.stopSequence !== undefined ? 'stop_sequence' : stopReason(answer.finishReason),
      stop_sequence: answer.stopSequence ?? null,
      ...(reportUsage ? { usage: Object.assign(inputUsage(answer), { output_tokens: answer.usage.completion }, usageFields) } : {}),
    };
  },

  streamStart(ctx) {
    const message = {
      id: messageId(ctx.id),
      type: 'message',
      role: 'assistant',
      model: ctx.input.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(ctx.reportUsage ? { usage: Object.assign(inputUsage(ctx.answer), { output_tokens: 1 }, ctx.usageFields) } : {}),
    };
    const first = ctx.answer.reasoningPieces.length
      ? event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } })
      : answerBlockStart(ctx);
    return [event('message_start', { type: 'message_start', message }), first, event('ping', { type: 'ping' })];
  },

  reasoningPiece: (_ctx, piece) => [event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: piece } })],

  reasoningEnd: (ctx) => [
    event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: ctx.answer.signature } }),
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    answerBlockStart(ctx),
  ],

  textPiece: (ctx, piece) => [event('content_block_delta', { type: 'content_block_delta', index: answerIndex(ctx), delta: { type: 'text_delta', text: piece } })],

  toolPiece: (ctx, piece) => [event('content_block_delta', { type: 'content_block_delta', index: answerIndex(ctx), delta: { type: 'input_json_delta', partial_json: piece } })],

  streamEnd(ctx) {
    const frames: Frame[] = [event('content_block_stop', { type: 'content_block_stop', index: answerIndex(ctx) })];
    frames.push(
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: ctx.answer.stopSequence !== undefined ? 'stop_sequence' : stopReason(ctx.answer.finishReason), stop_sequence: ctx.answer.stopSequence ?? null },
        ...(ctx.reportUsage ? { usage: Object.assign({ output_tokens: ctx.answer.usage.completion }, ctx.usageFields) } : {}),
      }),
      event('message_stop', { type: 'message_stop' }),
    );
    return frames;
  },

  errorBody: (status, message) => ({ type: 'error', error: { type: errorType(status), message } }),

  streamError: (message) => [event('error', { type: 'error', error: { type: 'overloaded_error', message } })],

  malformedFrame: () => 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n',
};

function inputUsage(answer: MockRenderContext['answer']) {
  return {
    input_tokens: answer.usage.prompt - answer.usage.cached - answer.usage.cacheWrite,
    cache_creation_input_tokens: answer.usage.cacheWrite,
    cache_read_input_tokens: answer.usage.cached,
  };
}

/** The answer's block comes after the thinking block when there is one. */
const answerIndex = (ctx: MockRenderContext) => (ctx.answer.reasoningPieces.length ? 1 : 0);

function answerBlockStart(ctx: MockRenderContext): string {
  const call = ctx.answer.toolCall;
  const block = call ? { type: 'tool_use', id: toolId(call.id), name: call.name, input: {} } : { type: 'text', text: '' };
  return event('content_block_start', { type: 'content_block_start', index: answerIndex(ctx), content_block: block });
}

/**
 * As Anthropic requires with thinking on: an assistant turn that used a tool, answered by tool results
 * in the last user turn, must start with its thinking block, signature intact.
 */
function checkThinkingHistory(messages: Array<{ role: string; content: unknown }>): void {
  const last = messages[messages.length - 1];
  const previous = messages[messages.length - 2];
  const answersTool = last.role === 'user' && Array.isArray(last.content) && last.content.some((b: Json) => b?.type === 'tool_result');
  if (!answersTool || previous?.role !== 'assistant' || !Array.isArray(previous.content)) return;
  const first = previous.content[0] as Json | undefined;
  if (first?.type === 'redacted_thinking') return;
  if (first?.type !== 'thinking') {
    throw new MockBadRequest(`messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`);
  }
  if (first.signature !== mockSignature(String(first.thinking))) throw new MockBadRequest('Invalid `signature` in `thinking` block');
}

/** cache_control breakpoints on system blocks, message blocks and tools (Anthropic allows at most four). */
function countCacheControl(request: Json): number {
  const blocks: unknown[] = [
    ...(Array.isArray(request.system) ? request.system : []),
    ...(Array.isArray(request.tools) ? request.tools : []),
    ...(Array.isArray(request.messages) ? (request.messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])) : []),
  ];
  const count = blocks.filter((b) => typeof b === 'object' && b !== null && (b as Json).cache_control !== undefined).length;
  if (count > 4) throw new MockBadRequest('A maximum of 4 blocks with cache_control may be provided.');
  return count;
}

function stopReason(reason: MockRenderContext['answer']['finishReason']): string {
  return reason === 'length' ? 'max_tokens' : reason === 'tool_calls' ? 'tool_use' : 'end_turn';
}

function errorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

const messageId = (id: string) => `msg_${id.replace(/-/g, '_')}`;
const toolId = (id: string) => id.replace(/^call_/, 'toolu_');

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: Json) => {
      if (block?.type === 'text') return String(block.text);
      if (block?.type === 'tool_result') return typeof block.content === 'string' ? block.content : textOf(block.content);
      return '';
    })
    .join('');
}
