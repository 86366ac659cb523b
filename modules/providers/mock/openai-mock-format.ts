import type { OpenAiMessage } from '../openai/openai-wire.js';
import { type Frame, MockBadRequest, type MockFormat, type MockRenderContext } from './mock-format.js';
import type { MockInput, MockLogprob } from './mock-script.js';

const sse = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;
const AZURE_ROUTE = /\/openai\/deployments\/([^/]+)\/chat\/completions$/;

/** The mock's OpenAI Chat Completions dialect (also used for Azure OpenAI paths). */
export const openAiMockFormat: MockFormat = {
  name: 'openai',
  streamContentType: 'text/event-stream',

  matches: (method, path) => method === 'POST' && /\/chat\/completions$/.test(path),

  /** Azure refuses a call without its `api-key` (or an Entra ID bearer token) before reading the body. */
  authProblem(headers, path) {
    if (!AZURE_ROUTE.test(path) || headers['api-key'] || headers.authorization) return null;
    return { status: 401, message: 'Access denied due to invalid subscription key or wrong API endpoint.' };
  },

  parse(body, path, query): MockInput {
    const request = body as Record<string, unknown>;
    if (!request || typeof request !== 'object' || !Array.isArray(request.messages)) throw new MockBadRequest("'messages' is required");
    const azure = AZURE_ROUTE.exec(path);
    if (azure && !query?.get('api-version')) throw new MockBadRequest('Missing required query parameter: api-version');
    const model = azure ? decodeURIComponent(azure[1]) : request.model;
    if (typeof model !== 'string' || !model) throw new MockBadRequest("'model' is required");
    const messages = request.messages as OpenAiMessage[];
    const tools = Array.isArray(request.tools)
      ? (request.tools as Array<{ function: { name: string; parameters?: Record<string, unknown> } }>).map((t) => ({
          name: t.function.name,
          parameters: t.function.parameters ?? { type: 'object', properties: {} },
        }))
      : [];
    const choice = request.tool_choice as string | { function?: { name: string } } | undefined;
    const format = request.response_format as { type: string; json_schema?: { schema: Record<string, unknown> } } | undefined;
    const maxTokens = (request.max_completion_tokens ?? request.max_tokens ?? null) as number | null;
    return {
      model,
      stream: request.stream === true,
      includeUsage: (request.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
      promptText: messages.map((m) => textOf(m.content)).join('\n'),
      tools,
      toolChoice: typeof choice === 'object' && choice?.function ? { name: choice.function.name } : ((choice as MockInput['toolChoice']) ?? 'auto'),
      answeringToolResult: messages[messages.length - 1]?.role === 'tool',
      responseFormat:
        format?.type === 'json_schema' && format.json_schema
          ? { type: 'json_schema', schema: format.json_schema.schema }
          : format?.type === 'json_object'
            ? { type: 'json_object' }
            : null,
      maxTokens,
      reasoning: typeof request.reasoning_effort === 'string',
      logprobs: request.logprobs === true ? { top: typeof request.top_logprobs === 'number' ? request.top_logprobs : 0 } : null,
      cacheBreakpoints: 0,
      stop: typeof request.stop === 'string' ? [request.stop] : Array.isArray(request.stop) ? (request.stop as string[]) : [],
    };
  },

  buffered({ id, created, input, answer, reportUsage, usageFields }) {
    return {
      id,
      object: 'chat.completion',
      created,
      model: input.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: answer.toolCall ? null : answer.textPieces.join(''),
            ...(answer.toolCall
              ? { tool_calls: [answer.toolCall, ...(answer.parallelToolCall ? [answer.parallelToolCall] : [])].map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentPieces.join('') } })) }
              : {}),
            refusal: null,
            // What OpenAI-compatible reasoning servers (vLLM, DeepSeek) return; OpenAI itself returns only the count.
            ...(answer.reasoningPieces.length ? { reasoning_content: answer.reasoningPieces.join('') } : {}),
          },
          finish_reason: answer.finishReason,
          logprobs: answer.logprobs ? { content: answer.logprobs.map(wireLogprob), refusal: null } : null,
        },
      ],
      ...(reportUsage ? { usage: usageOf(answer, usageFields) } : {}),
      system_fingerprint: 'fp_mock',
    };
  },

  streamStart: (ctx) => [chunk(ctx, { role: 'assistant', content: '' }, null)],

  reasoningPiece: (ctx, piece) => [chunk(ctx, { reasoning_content: piece }, null)],

  reasoningEnd: () => [],

  textPiece: (ctx, piece, index) => [chunk(ctx, { content: piece }, null, ctx.answer.logprobs ? { content: [wireLogprob(ctx.answer.logprobs[index])], refusal: null } : null)],

  toolPiece(ctx, piece, index) {
    const frames = [chunk(ctx, toolDelta(0, ctx.answer.toolCall!, piece, index), null)];
    // A parallel call's piece i follows the first call's piece i: the two calls' arguments interleave.
    const parallel = ctx.answer.parallelToolCall;
    if (parallel && index < parallel.argumentPieces.length) frames.push(chunk(ctx, toolDelta(1, parallel, parallel.argumentPieces[index], index), null));
    return frames;
  },

  streamEnd(ctx) {
    const frames: Frame[] = [];
    const parallel = ctx.answer.parallelToolCall;
    const first = ctx.answer.toolCall?.argumentPieces.length ?? 0;
    for (let i = first; parallel && i < parallel.argumentPieces.length; i++) frames.push(chunk(ctx, toolDelta(1, parallel, parallel.argumentPieces[i], i), null));
    frames.push(chunk(ctx, {}, ctx.answer.finishReason));
    if (ctx.input.includeUsage && ctx.reportUsage) {
      frames.push(sse({ id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.input.model, choices: [], usage: usageOf(ctx.answer, ctx.usageFields) }));
    }
    frames.push('data: [DONE]\n\n');
    return frames;
  },

  errorBody: (status, message) => ({
    error: { message, type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null },
  }),

  streamError: (message) => [sse({ error: { message, type: 'server_error', param: null, code: null } })],

  malformedFrame: () => 'data: {"id": "chatcmpl-broken", "choices": [\n\n',
};

function toolDelta(slot: number, call: { id: string; name: string }, piece: string, index: number): Record<string, unknown> {
  return index === 0
    ? { tool_calls: [{ index: slot, id: call.id, type: 'function', function: { name: call.name, arguments: piece } }] }
    : { tool_calls: [{ index: slot, function: { arguments: piece } }] };
}

function chunk(ctx: MockRenderContext, delta: Record<string, unknown>, finishReason: string | null, logprobs: unknown = null): string {
  return sse({
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.input.model,
    system_fingerprint: 'fp_mock',
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs }],
  });
}

function wireLogprob(entry: MockLogprob) {
  const bytes = (text: string) => [...Buffer.from(text, 'utf8')];
  return { token: entry.token, logprob: entry.logprob, bytes: bytes(entry.token), top_logprobs: entry.top.map((t) => ({ token: t.token, logprob: t.logprob, bytes: bytes(t.token) })) };
}

function usageOf(answer: MockRenderContext['answer'], fields: MockRenderContext['usageFields']) {
  return Object.assign({
    prompt_tokens: answer.usage.prompt,
    completion_tokens: answer.usage.completion,
    total_tokens: answer.usage.prompt + answer.usage.completion,
    prompt_tokens_details: { cached_tokens: answer.usage.cached },
    completion_tokens_details: { reasoning_tokens: answer.usage.reasoning },
  }, fields);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part?.type === 'text' ? String(part.text) : '')).join('');
  return '';
}
