import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { estimateInputTokens } from '../../modules/canonical/token-estimate.js';
import { parseAnthropicMessagesRequest } from '../../modules/inference/formats/anthropic/anthropic-messages-request.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';
import { parseOpenAiEmbeddingsRequest } from '../../modules/inference/formats/openai/openai-embeddings-request.js';
import { parseResponsesRequest } from '../../modules/inference/formats/responses/responses-request.js';
import { toAnthropicRequest } from '../../modules/providers/anthropic/anthropic-request.js';
import { toGeminiRequest } from '../../modules/providers/gemini/gemini-request.js';

/** Deep JSON as a client sends it: parsed from text, never built by recursion. */
const deepObject = (levels: number) => JSON.parse('{"a":'.repeat(levels) + '1' + '}'.repeat(levels)) as Record<string, unknown>;
const deepText = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
/** An array schema whose items are arrays, `levels` schemas deep (one JSON level each). */
const deepArraySchema = (levels: number) => JSON.parse('{"type":"array","items":'.repeat(levels) + '{"type":"string"}' + '}'.repeat(levels)) as Record<string, unknown>;

function refusal(parse: () => unknown): GatewayError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

const openAi = { model: 'chat', messages: [{ role: 'user', content: 'hi' }] };
const anthropic = { model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

describe('client formats bound nesting at parse time, naming the parameter', () => {
  test.each([
    ['tools[0].function.parameters', { ...openAi, tools: [{ type: 'function', function: { name: 'f', parameters: deepObject(10_000) } }] }],
    ['response_format.json_schema.schema', { ...openAi, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: deepObject(10_000) } } }],
    ['messages[1].tool_calls[0].function.arguments', {
      ...openAi,
      messages: [openAi.messages[0], { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: deepText(10_000) } }] }],
    }],
  ])('OpenAI chat: %s', (param, body) => {
    expect(refusal(() => parseOpenAiChatRequest(body))).toMatchObject({ status: 400, code: 'invalid_request', param });
  });

  test.each([
    ['tools.0.input_schema', { ...anthropic, tools: [{ name: 'f', input_schema: deepObject(10_000) }] }],
    ['messages.1.content.0.input', {
      ...anthropic,
      messages: [anthropic.messages[0], { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: deepObject(10_000) }] }],
    }],
  ])('Anthropic messages: %s', (param, body) => {
    expect(refusal(() => parseAnthropicMessagesRequest(body))).toMatchObject({ status: 400, code: 'invalid_request', param });
  });

  const responses = { model: 'chat', input: 'hi' };
  test.each([
    ['tools[0].parameters', { ...responses, tools: [{ type: 'function', name: 'f', parameters: deepObject(10_000) }] }],
    ['text.format.schema', { ...responses, text: { format: { type: 'json_schema', name: 'x', schema: deepObject(10_000) } } }],
    ['input[0].arguments', { ...responses, input: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: deepText(10_000) }] }],
  ])('OpenAI Responses: %s', (param, body) => {
    expect(refusal(() => parseResponsesRequest(body))).toMatchObject({ status: 400, code: 'invalid_request', param });
  });

  test('structured Responses fields (input items, their content) are bounded by the structural limit', () => {
    const nested = { ...responses, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi', extra: deepObject(10_000) }] }] };
    expect(refusal(() => parseResponsesRequest(nested)).param).toMatch(/^input\[0\]\.content\[0\]\.extra(\.a)+$/);
  });

  test('structured Anthropic fields (tool_result content, metadata) are bounded by the structural limit', () => {
    const toolResult = {
      ...anthropic,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [deepObject(10_000)] }] },
      ],
    };
    expect(refusal(() => parseAnthropicMessagesRequest(toolResult)).param).toMatch(/^messages\.2\.content\.0\.content\.0(\.a)+$/);
    expect(refusal(() => parseAnthropicMessagesRequest({ ...anthropic, metadata: deepObject(10_000) })).param).toMatch(/^metadata(\.a)+$/);
  });

  test('embeddings: a deep input is refused before it is looked at', () => {
    const error = refusal(() => parseOpenAiEmbeddingsRequest({ model: 'embed', input: JSON.parse('['.repeat(10_000) + ']'.repeat(10_000)) }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(error.param).toMatch(/^input(\[0\])+$/);
  });

  test('a schema at the limit is accepted, and everything downstream handles it', () => {
    const request = parseOpenAiChatRequest({
      ...openAi,
      tools: [{ type: 'function', function: { name: 'f', parameters: deepArraySchema(63) } }],
      messages: [openAi.messages[0], { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: deepText(63) } }] }, { role: 'tool', tool_call_id: 'c1', content: deepText(63) }],
    });
    expect(estimateInputTokens(request)).toBeGreaterThan(0);
    expect(() => JSON.stringify(toAnthropicRequest(request, { model: 'claude', defaultMaxTokens: 100, stream: false }))).not.toThrow();
    // Gemini's own, smaller limit: a request problem naming the parameter (the route is ineligible), not a crash.
    expect(() => toGeminiRequest(request)).toThrow(expect.objectContaining({ name: 'GeminiRequestProblem', param: 'tools' }));
  });

  test('a tool result nested too deep for JSON stays text for Gemini instead of breaking the request', () => {
    const request = parseOpenAiChatRequest({
      ...openAi,
      messages: [openAi.messages[0], { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: deepText(10_000) }],
    });
    const body = JSON.stringify(toGeminiRequest(request));
    expect(body).toContain('"output":"{\\"a\\":');
  });
});

describe('keys named like Object.prototype members are unsupported parameters, never a 500 or silently dropped', () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf'];

  test.each(names)('OpenAI chat, top level and nested: %s', (name) => {
    for (const value of [1, 'x', null, {}, []]) {
      expect(refusal(() => parseOpenAiChatRequest({ ...openAi, [name]: value }))).toMatchObject({ status: 400, code: 'unsupported_parameter', param: name });
    }
    const nested: Array<[string, Record<string, unknown>]> = [
      [`messages[0].${name}`, { ...openAi, messages: [{ role: 'user', content: 'hi', [name]: 1 }] }],
      [`messages[0].content[0].${name}`, { ...openAi, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', [name]: 1 }] }] }],
      [`tools[0].function.${name}`, { ...openAi, tools: [{ type: 'function', function: { name: 'f', [name]: 1 } }] }],
      [`metadata.${name}`, { ...openAi, metadata: { [name]: 'x' } }],
      [`stream_options.${name}`, { ...openAi, stream: true, stream_options: { [name]: true } }],
      [`response_format.${name}`, { ...openAi, response_format: { type: 'text', [name]: 1 } }],
    ];
    for (const [param, body] of nested) expect(refusal(() => parseOpenAiChatRequest(body))).toMatchObject({ code: 'unsupported_parameter', param });
  });

  test.each(names)('Anthropic messages, top level and nested: %s', (name) => {
    expect(refusal(() => parseAnthropicMessagesRequest({ ...anthropic, [name]: 1 }))).toMatchObject({ status: 400, code: 'unsupported_parameter', param: name });
    expect(refusal(() => parseAnthropicMessagesRequest({ ...anthropic, metadata: { [name]: 'x' } }))).toMatchObject({ param: `metadata.${name}` });
    expect(refusal(() => parseAnthropicMessagesRequest({ ...anthropic, tools: [{ name: 'f', input_schema: {}, [name]: 1 }] }))).toMatchObject({ param: `tools.0.${name}` });
  });

  test('embeddings: such names at the top level', () => {
    for (const name of names) {
      expect(refusal(() => parseOpenAiEmbeddingsRequest({ model: 'embed', input: 'x', [name]: 1 }))).toMatchObject({ code: 'unsupported_parameter', param: name });
    }
  });

  test('inside a schema or a tool input such names are ordinary properties', () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string' } }, required: ['constructor'] };
    expect(parseOpenAiChatRequest({ ...openAi, tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] }).tools[0].parameters).toEqual(schema);
    const request = parseAnthropicMessagesRequest({
      ...anthropic,
      tools: [{ name: 'f', input_schema: schema }],
      messages: [anthropic.messages[0], { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { constructor: 'x' } }] }],
    });
    expect(request.messages[1]).toMatchObject({ role: 'assistant', toolCalls: [{ arguments: '{"constructor":"x"}' }] });
  });
});
