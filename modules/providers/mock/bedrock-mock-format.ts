import { encodeEventFrame, encodeExceptionFrame } from '../bedrock/bedrock-event-stream.js';
import { type ConverseContentBlock, type ConverseMessage, type ConverseStopReason, EVENT_STREAM_CONTENT_TYPE } from '../bedrock/bedrock-wire.js';
import { type Frame, MockBadRequest, type MockFormat, type MockRenderContext } from './mock-format.js';
import { type MockAnswer, type MockInput, mockSignature } from './mock-script.js';

type Json = Record<string, unknown>;

const PATH = /\/model\/([^/]+)\/(converse|converse-stream)$/;
const BLOCK_KINDS = ['text', 'image', 'document', 'toolUse', 'toolResult', 'reasoningContent', 'cachePoint'];
const DOCUMENT_FORMATS = ['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md'];
/** Converse's document names: letters, digits, single whitespace, hyphens, parentheses, square brackets. */
const DOCUMENT_NAME = /^(?!.*\s\s)[A-Za-z0-9\s\-()[\]]{1,200}$/;
const IMAGE_FORMATS = ['png', 'jpeg', 'gif', 'webp'];
/** Bedrock pads stream events with a `p` field of varying length (so sizes leak nothing); the mock does too. */
const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `x-amzn-errortype` for each status, as Bedrock Runtime names its errors. */
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 408: 'ModelTimeoutException',
  424: 'ModelErrorException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException',
};

/**
 * The mock's Amazon Bedrock Converse dialect: `POST /model/{modelId}/converse` (JSON) and
 * `/converse-stream` (binary AWS event-stream frames, encoded with the AWS SDK's codec). It validates
 * what Bedrock validates and a gateway can get wrong — a SigV4 `authorization` header (present and
 * well-formed; the signature itself is not checked), alternating roles starting with the user, no blank
 * text blocks, image bytes, a toolConfig whenever tool blocks appear — and, like Bedrock, reports
 * `inputTokens` without the cache reads. In-stream failures are `modelStreamErrorException` frames.
 */
export const bedrockMockFormat: MockFormat = {
  name: 'bedrock',
  streamContentType: EVENT_STREAM_CONTENT_TYPE,

  matches: (method, path) => method === 'POST' && PATH.test(path),

  authProblem(headers) {
    const authorization = headers.authorization;
    if (typeof authorization !== 'string' || authorization.length === 0) return { status: 403, message: 'Missing Authentication Token' };
    const wellFormed = /^AWS4-HMAC-SHA256 Credential=[^/\s]+\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/;
    if (!wellFormed.test(authorization) || typeof headers['x-amz-date'] !== 'string') {
      return { status: 403, message: 'The request signature we calculated does not match the signature you provided.' };
    }
    return null;
  },

  parse(body, path): MockInput {
    const [, encodedModel, operation] = PATH.exec(path)!;
    const request = body as Json;
    if (!request || typeof request !== 'object' || Array.isArray(request)) throw new MockBadRequest('The request body must be a JSON object.');
    if (!Array.isArray(request.messages) || request.messages.length === 0) throw new MockBadRequest('The messages field is required.');
    const messages = request.messages as ConverseMessage[];
    const toolConfig = request.toolConfig as { tools?: Array<{ toolSpec?: { name: string; inputSchema?: { json?: Json } } }>; toolChoice?: Json } | undefined;
    for (const [i, message] of messages.entries()) validateMessage(message, i, i > 0 ? messages[i - 1] : null, toolConfig !== undefined);
    if (messages[0].role !== 'user') throw new MockBadRequest('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    const system = Array.isArray(request.system) ? (request.system as Array<{ text?: string }>).map((b) => b.text ?? '') : [];
    const additional = (request.additionalModelRequestFields ?? {}) as { thinking?: { type?: string; budget_tokens?: number } };
    const reasoning = additional.thinking?.type === 'enabled';
    if (reasoning) checkReasoningHistory(messages);
    const cacheBreakpoints = [
      ...(Array.isArray(request.system) ? request.system : []),
      ...(toolConfig?.tools ?? []),
      ...messages.flatMap((m) => m.content),
    ].filter((block) => (block as Json)?.cachePoint !== undefined).length;
    const tools = (toolConfig?.tools ?? []).filter((tool) => !('cachePoint' in tool)).map((tool) => {
      if (!tool.toolSpec?.name || !tool.toolSpec.inputSchema?.json) throw new MockBadRequest('Each tool needs a toolSpec with a name and inputSchema.json.');
      return { name: tool.toolSpec.name, parameters: tool.toolSpec.inputSchema.json };
    });
    const choice = toolConfig?.toolChoice;
    const tool = choice?.tool as { name?: string } | undefined;
    const last = messages[messages.length - 1];
    const inference = (request.inferenceConfig ?? {}) as { maxTokens?: number; stopSequences?: string[] };
    return {
      model: decodeURIComponent(encodedModel),
      stream: operation === 'converse-stream',
      includeUsage: true, // ConverseStream always ends with a metadata event carrying usage
      promptText: [...system, ...messages.map((m) => m.content.map(blockText).join(''))].filter((t) => t.length > 0).join('\n'),
      tools,
      toolChoice: tool?.name ? { name: tool.name } : choice && 'any' in choice ? 'required' : 'auto',
      answeringToolResult: last.role === 'user' && last.content.some((block) => block.toolResult !== undefined),
      responseFormat: null,
      maxTokens: typeof inference.maxTokens === 'number' ? inference.maxTokens : null,
      reasoning,
      logprobs: null,
      cacheBreakpoints,
      stop: Array.isArray(inference.stopSequences) ? inference.stopSequences : [],
      // Claude on Bedrock names the matched stop sequence only when the request asks for that field.
      namesStopSequence: Array.isArray(request.additionalModelResponseFieldPaths) && request.additionalModelResponseFieldPaths.includes('/stop_sequence'),
    };
  },

  buffered({ input, answer, reportUsage, usageFields }) {
    const content: ConverseContentBlock[] = answer.toolCall
      ? [{ toolUse: { toolUseId: toolUseId(answer), name: answer.toolCall.name, input: JSON.parse(answer.toolCall.argumentPieces.join('')) } }]
      : [{ text: answer.textPieces.join('') }];
    if (answer.reasoningPieces.length) content.unshift({ reasoningContent: { reasoningText: { text: answer.reasoningPieces.join(''), signature: answer.signature! } } });
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: stopReasonOf(answer),
      ...stopSequenceField(input, answer),
      ...(reportUsage ? { usage: usageOf(answer, usageFields) } : {}),
      metrics: { latencyMs: 1 },
    };
  },

  streamStart: () => [event('messageStart', { role: 'assistant' })],

  reasoningPiece: (_ctx, piece) => [event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: piece } } })],

  reasoningEnd: (ctx) => [
    event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: ctx.answer.signature } } }),
    event('contentBlockStop', { contentBlockIndex: 0 }),
  ],

  textPiece: (ctx, piece) => [event('contentBlockDelta', { contentBlockIndex: answerIndex(ctx), delta: { text: piece } })],

  toolPiece(ctx, piece, index) {
    const call = ctx.answer.toolCall!;
    const frames: Frame[] = [];
    const block = answerIndex(ctx);
    if (index === 0) frames.push(event('contentBlockStart', { contentBlockIndex: block, start: { toolUse: { toolUseId: toolUseId(ctx.answer), name: call.name } } }));
    frames.push(event('contentBlockDelta', { contentBlockIndex: block, delta: { toolUse: { input: piece } } }));
    return frames;
  },

  streamEnd(ctx: MockRenderContext) {
    const frames: Frame[] = [
      event('contentBlockStop', { contentBlockIndex: answerIndex(ctx) }),
      event('messageStop', { stopReason: stopReasonOf(ctx.answer), ...stopSequenceField(ctx.input, ctx.answer) }),
    ];
    if (ctx.reportUsage) frames.push(event('metadata', { usage: usageOf(ctx.answer, ctx.usageFields), metrics: { latencyMs: 1 } }));
    return frames;
  },

  errorBody: (_status, message) => ({ message }),

  errorHeaders: (status) => ({ 'x-amzn-errortype': `${ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException')}:http://internal.amazon.com/coral/com.amazon.bedrock/` }),

  streamError: (message) => [Buffer.from(encodeExceptionFrame('modelStreamErrorException', message))],

  /** A frame whose message CRC does not match: what a corrupted or truncated transfer looks like. */
  malformedFrame() {
    const frame = Buffer.from(encodeEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'broken' } }));
    frame[frame.length - 1] ^= 0xff;
    return frame;
  },
};

function validateMessage(message: ConverseMessage, index: number, previous: ConverseMessage | null, hasToolConfig: boolean): void {
  if (message?.role !== 'user' && message?.role !== 'assistant') throw new MockBadRequest(`messages.${index}.role must be user or assistant.`);
  if (previous && previous.role === message.role) throw new MockBadRequest('A conversation must alternate between user and assistant roles.');
  if (!Array.isArray(message.content) || message.content.length === 0) throw new MockBadRequest(`messages.${index}.content must not be empty.`);
  for (const block of message.content) {
    const kinds = Object.keys(block ?? {}).filter((key) => BLOCK_KINDS.includes(key));
    if (kinds.length !== 1 || Object.keys(block).length !== 1) throw new MockBadRequest(`messages.${index}: each content block must set exactly one member.`);
    if (block.text !== undefined && (typeof block.text !== 'string' || block.text.trim() === '')) {
      throw new MockBadRequest('The text field in the ContentBlock object is blank. Add text to the text field, and try again.');
    }
    if (block.image && (!IMAGE_FORMATS.includes(block.image.format) || !/^[A-Za-z0-9+/]+={0,2}$/.test(block.image.source?.bytes ?? ''))) {
      throw new MockBadRequest(`messages.${index}: an image needs a format (png, jpeg, gif, webp) and base64 source.bytes.`);
    }
    if (block.document) {
      const { format, name, source } = block.document;
      if (!DOCUMENT_FORMATS.includes(format) || !/^[A-Za-z0-9+/]+={0,2}$/.test(source?.bytes ?? '')) {
        throw new MockBadRequest(`messages.${index}: a document needs a format (${DOCUMENT_FORMATS.join(', ')}) and base64 source.bytes.`);
      }
      if (typeof name !== 'string' || !DOCUMENT_NAME.test(name)) throw new MockBadRequest(`messages.${index}: the document name '${String(name)}' has characters Converse does not allow.`);
      if (!message.content.some((b) => typeof b.text === 'string' && b.text.trim() !== '')) {
        throw new MockBadRequest('A conversation must include a text block when it includes a document block.');
      }
    }
    if ((block.toolUse || block.toolResult) && !hasToolConfig) {
      throw new MockBadRequest('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
    }
    if (block.toolUse && message.role !== 'assistant') throw new MockBadRequest('toolUse blocks belong to assistant messages.');
    if (block.toolResult && message.role !== 'user') throw new MockBadRequest('toolResult blocks belong to user messages.');
  }
}

function blockText(block: ConverseContentBlock): string {
  if (typeof block.text === 'string') return block.text;
  if (block.toolResult) return block.toolResult.content.map((c) => ('text' in c ? c.text : JSON.stringify(c.json))).join('');
  if (block.toolUse) return JSON.stringify(block.toolUse.input);
  return '';
}

function event(eventType: string, payload: Json): Buffer {
  const padding = PADDING.slice(0, 1 + (JSON.stringify(payload).length % PADDING.length));
  return Buffer.from(encodeEventFrame(eventType, { ...payload, p: padding }));
}

function toolUseId(answer: MockAnswer): string {
  return answer.toolCall!.id.replace(/^call_/, 'tooluse_');
}

function stopReasonOf(answer: MockAnswer): ConverseStopReason {
  if (answer.stopSequence !== undefined) return 'stop_sequence';
  return answer.finishReason === 'tool_calls' ? 'tool_use' : answer.finishReason === 'length' ? 'max_tokens' : 'end_turn';
}

function stopSequenceField(input: MockInput, answer: MockAnswer): { additionalModelResponseFields?: { stop_sequence: string } } {
  return input.namesStopSequence && answer.stopSequence !== undefined ? { additionalModelResponseFields: { stop_sequence: answer.stopSequence } } : {};
}

function usageOf(answer: MockAnswer, fields: MockRenderContext['usageFields']) {
  const { prompt, completion, cached, cacheWrite } = answer.usage;
  return Object.assign({
    inputTokens: prompt - cached - cacheWrite,
    outputTokens: completion,
    totalTokens: prompt + completion,
    ...(cached > 0 || cacheWrite > 0 ? { cacheReadInputTokens: cached, cacheWriteInputTokens: cacheWrite } : {}),
  }, fields);
}

const answerIndex = (ctx: MockRenderContext) => (ctx.answer.reasoningPieces.length ? 1 : 0);

/** Claude on Bedrock, like Anthropic: a tool-use turn continued with thinking on must keep its signed thinking first. */
function checkReasoningHistory(messages: ConverseMessage[]): void {
  const last = messages[messages.length - 1];
  const previous = messages[messages.length - 2];
  if (!last.content.some((b) => b.toolResult) || previous?.role !== 'assistant') return;
  const first = previous.content[0]?.reasoningContent;
  if (first?.redactedContent) return;
  if (!first?.reasoningText) {
    throw new MockBadRequest('The model returned the following errors: messages.1.content.0.type: Expected `thinking` or `redacted_thinking`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.');
  }
  if (first.reasoningText.signature !== mockSignature(first.reasoningText.text)) throw new MockBadRequest('The model returned the following errors: Invalid `signature` in `thinking` block');
}
