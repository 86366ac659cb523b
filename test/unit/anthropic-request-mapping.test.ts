import type { ChatRequest } from '../../modules/canonical/chat-request.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { parseAnthropicMessagesRequest } from '../../modules/inference/formats/anthropic/anthropic-messages-request.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';
import { messagesPath } from '../../modules/providers/anthropic/anthropic-adapter.js';
import { toAnthropicRequest, unsupportedByAnthropic } from '../../modules/providers/anthropic/anthropic-request.js';
import { resolvedDeployment } from '../support/provider-fixtures.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==';
const weatherTool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const options = { model: 'claude-sonnet-upstream', defaultMaxTokens: 4096, stream: false };

/** Runs a parser and returns the GatewayError it throws. */
function rejection(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('Anthropic client request → canonical', () => {
  const base = { model: 'claude', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] };

  test('system blocks, text, images, tool_use and tool_result map onto canonical messages in order', () => {
    const request = parseAnthropicMessagesRequest({
      model: 'claude',
      max_tokens: 512,
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in French.' }],
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ['\n\nHuman:'],
      metadata: { user_id: 'user-42' },
      tools: [weatherTool],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather here?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C', is_error: false }, { type: 'text', text: 'And tomorrow?' }] },
      ],
    });
    expect(request).toMatchObject({
      model: 'claude', maxOutputTokens: 512, temperature: 0.3, topP: 0.9, stop: ['\n\nHuman:'], user: 'user-42',
      toolChoice: { type: 'required' }, parallelToolCalls: false, stream: false, n: 1, responseFormat: null, seed: null, metadata: null,
    });
    expect(request.tools).toEqual([{ name: 'get_weather', description: 'Weather for a city', parameters: weatherTool.input_schema, strict: null }]);
    expect(request.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in French.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather here?' }, { type: 'image', url: `data:image/png;base64,${PNG}`, detail: null, mediaType: 'image/png' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }], toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18°C' }] },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
  });

  test('strict on an Anthropic-format tool: a boolean is kept on the canonical tool, anything else is a 400 naming it', () => {
    expect(() => parseAnthropicMessagesRequest({ ...base, tools: [{ ...weatherTool, strict: 'yes' }] })).toThrow(expect.objectContaining({ status: 400, param: 'tools.0.strict' }));
    expect(parseAnthropicMessagesRequest({ ...base, tools: [{ ...weatherTool, strict: true }] }).tools[0].strict).toBe(true);
    expect(parseAnthropicMessagesRequest({ ...base, tools: [{ ...weatherTool, strict: false }] }).tools[0].strict).toBe(false);
  });

  test('output_config.format (Anthropic structured outputs) is the canonical json_schema request, which the parameter tables route', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    expect(parseAnthropicMessagesRequest({ ...base, output_config: { format: { type: 'json_schema', schema } } }).responseFormat)
      .toEqual({ type: 'json_schema', name: 'output', schema, strict: null, description: null });
    expect(parseAnthropicMessagesRequest({ ...base, output_config: {} }).responseFormat).toBeNull();
  });

  test('a streamed request always carries usage (Anthropic streams report it unasked)', () => {
    expect(parseAnthropicMessagesRequest({ ...base, stream: true })).toMatchObject({ stream: true, includeUsage: true });
  });

  test.each([
    ['max_tokens is missing', { model: 'claude', messages: base.messages }, 'max_tokens', 'invalid_request'],
    ['max_tokens is not a positive integer', { ...base, max_tokens: 0 }, 'max_tokens', 'invalid_request'],
    ['model is missing', { max_tokens: 5, messages: base.messages }, 'model', 'invalid_request'],
    ['messages is empty', { ...base, messages: [] }, 'messages', 'invalid_request'],
    ['a system role inside messages', { ...base, messages: [{ role: 'system', content: 'x' }] }, 'messages.0.role', 'invalid_request'],
    ['temperature above 1', { ...base, temperature: 1.5 }, 'temperature', 'invalid_request'],
    ['top_k that is not a positive integer', { ...base, top_k: 0 }, 'top_k', 'invalid_request'],
    ['thinking without a budget', { ...base, thinking: { type: 'enabled' } }, 'thinking.budget_tokens', 'invalid_request'],
    ['a thinking budget below 1024', { ...base, thinking: { type: 'enabled', budget_tokens: 512 } }, 'thinking.budget_tokens', 'invalid_request'],
    ['a thinking budget not below max_tokens', { ...base, thinking: { type: 'enabled', budget_tokens: 4096 } }, 'thinking.budget_tokens', 'invalid_request'],
    ['an unknown thinking type', { ...base, thinking: { type: 'sometimes' } }, 'thinking.type', 'invalid_request'],
    ['an OpenAI service tier', { ...base, service_tier: 'flex' }, 'service_tier', 'invalid_request'],
    ['cache_control that is not ephemeral', { ...base, system: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] }, 'system.0.cache_control', 'invalid_request'],
    ['a cache ttl Anthropic does not offer', { ...base, tools: [{ ...weatherTool, cache_control: { type: 'ephemeral', ttl: '2h' } }] }, 'tools.0.cache_control.ttl', 'invalid_request'],
    ['a thinking block without its text', { ...base, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'thinking', signature: 's' }] }] }, 'messages.1.content.0.thinking', 'invalid_request'],
    ['metadata other than user_id', { ...base, metadata: { user_id: 'u', team: 'x' } }, 'metadata.team', 'unsupported_parameter'],
    ['a server tool', { ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type', 'unsupported_parameter'],
    ['a document from Anthropic\'s Files API', { ...base, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_1' } }] }] }, 'messages.0.content.0.source.type', 'unsupported_parameter'],
    ['a tool without input_schema', { ...base, tools: [{ name: 'x' }] }, 'tools.0.input_schema', 'invalid_request'],
    ['tool_choice naming an undeclared tool', { ...base, tools: [weatherTool], tool_choice: { type: 'tool', name: 'nope' } }, 'tool_choice.name', 'invalid_request'],
    ['tool_choice any without tools', { ...base, tool_choice: { type: 'any' } }, 'tool_choice', 'invalid_request'],
    ['a tool_result for an unknown tool_use', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }] }, 'messages.0.content.0.tool_use_id', 'invalid_request'],
    ['text before a tool_result', {
      ...base,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
        { role: 'user', content: [{ type: 'text', text: 'here:' }, { type: 'tool_result', tool_use_id: 't1', content: 'r' }] },
      ],
      tools: [weatherTool],
    }, 'messages.2.content.1', 'invalid_request'],
    ['output_config.effort (not a thinking budget)', { ...base, output_config: { effort: 'high' } }, 'output_config.effort', 'unsupported_parameter'],
    ['an output_config format other than json_schema', { ...base, output_config: { format: { type: 'json_object' } } }, 'output_config.format.type', 'invalid_request'],
    ['an output_config format without its schema', { ...base, output_config: { format: { type: 'json_schema' } } }, 'output_config.format.schema', 'invalid_request'],
    ['an image with an unsupported media type', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA==' } }] }] }, 'messages.0.content.0.source.media_type', 'invalid_request'],
  ])('%s → 400 naming %s', (_name, body, param, code) => {
    const error = rejection(() => parseAnthropicMessagesRequest(body));
    expect(error.status).toBe(400);
    expect(error.code).toBe(code);
    expect(error.param).toBe(param);
    expect(error.message).toContain(param);
  });

  test('neutral values are accepted: thinking disabled, service_tier auto, nulls', () => {
    expect(() => parseAnthropicMessagesRequest({ ...base, thinking: { type: 'disabled' }, service_tier: 'auto', top_k: null, metadata: null })).not.toThrow();
  });
});

describe('canonical → Anthropic provider request', () => {
  const openAi = (body: Record<string, unknown>): ChatRequest => parseOpenAiChatRequest({ model: 'alias', messages: [{ role: 'user', content: 'Hi' }], ...body });

  test('an OpenAI conversation with tools becomes alternating Anthropic turns with tool_use / tool_result blocks', () => {
    const request = openAi({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Use metric units.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }, { type: 'image_url', image_url: { url: 'https://example.com/map.png' } }] },
        {
          role: 'assistant', content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '18' },
        { role: 'tool', tool_call_id: 'call_b', content: '24' },
        { role: 'user', content: 'Which is warmer?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: weatherTool.input_schema } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      max_tokens: 300,
      temperature: 0.5,
      top_p: 0.8,
      stop: ['END'],
      user: 'end-user-7',
    });
    expect(toAnthropicRequest(request, options)).toEqual({
      model: 'claude-sonnet-upstream',
      max_tokens: 300,
      system: 'You are terse.\n\nUse metric units.',
      temperature: 0.5,
      top_p: 0.8,
      stop_sequences: ['END'],
      metadata: { user_id: 'end-user-7' },
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: weatherTool.input_schema }],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }, { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        // Both tool results and the next user text merge into one user turn, results first.
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '18' },
            { type: 'tool_result', tool_use_id: 'call_b', content: '24' },
            { type: 'text', text: 'Which is warmer?' },
          ],
        },
      ],
    });
  });

  test('base64 data URLs become base64 image sources; streams set stream: true', () => {
    const request = openAi({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }], stream: true });
    const body = toAnthropicRequest(request, { ...options, stream: true });
    expect(body.messages[0].content).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }]);
    expect(body.stream).toBe(true);
  });

  test('max_tokens defaults to the deployment cap when the request sets none', () => {
    expect(toAnthropicRequest(openAi({}), { ...options, defaultMaxTokens: 1234 }).max_tokens).toBe(1234);
  });

  test.each([
    [{ tool_choice: 'auto' }, { type: 'auto' }],
    [{ tool_choice: 'required' }, { type: 'any' }],
    [{ tool_choice: 'none' }, { type: 'none' }],
    [{}, undefined],
    [{ parallel_tool_calls: false }, { type: 'auto', disable_parallel_tool_use: true }],
  ])('tool_choice %j → %j', (body, expected) => {
    const request = openAi({ tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherTool.input_schema } }], ...body });
    expect(toAnthropicRequest(request, options).tool_choice).toEqual(expected);
  });

  test('an Anthropic client request survives the round trip through canonical unchanged in meaning', () => {
    const original = {
      model: 'alias', max_tokens: 100, system: 'Sys', temperature: 0.2, stop_sequences: ['X'], tools: [weatherTool], tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'cold', is_error: true }] },
      ],
    };
    const body = toAnthropicRequest(parseAnthropicMessagesRequest(original), { ...options, model: 'upstream' });
    expect(body).toEqual({
      model: 'upstream', max_tokens: 100, system: 'Sys', temperature: 0.2, stop_sequences: ['X'],
      tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: weatherTool.input_schema }],
      tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'cold', is_error: true }] },
      ],
    });
  });

  test.each([
    [{ n: 2 }, 'n'],
    [{ seed: 7 }, 'seed'],
    [{ temperature: 1.4 }, 'temperature'],
    [{ response_format: { type: 'json_object' } }, 'response_format'],
    [{ response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } } }, 'response_format'],
    [{ metadata: { team: 'a' } }, 'metadata'],
    [{ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }] }, 'tools[].function.strict'],
    [{ messages: [{ role: 'user', content: 'x', name: 'bob' }] }, 'messages[0].name'],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'high' } }] }] }, 'messages[0].content[0].image_url.detail'],
  ])('what Anthropic cannot honour is named, not dropped: %j → %s', (body, param) => {
    expect(unsupportedByAnthropic(openAi(body), resolvedDeployment('anthropic'))).toBe(param);
  });

  test('plain requests are fully supported', () => {
    expect(unsupportedByAnthropic(openAi({ temperature: 1, top_p: 0.5, stop: 'x', user: 'u', response_format: { type: 'text' } }), resolvedDeployment('anthropic'))).toBeNull();
  });

  test('assistant history whose tool arguments are not a JSON object is named before any provider call', () => {
    const request = openAi({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1,2' } }] },
      ],
    });
    expect(unsupportedByAnthropic(request, resolvedDeployment('anthropic'))).toBe('messages[1].tool_calls[0].function.arguments');
    expect(() => toAnthropicRequest(request, options)).toThrow(ProviderError);
    expect(() => toAnthropicRequest(request, options)).toThrow(expect.objectContaining({ errorClass: 'invalid_request', httpStatus: 400 }));
  });

  test.each([
    ['/', '/v1/messages'],
    ['', '/v1/messages'],
    ['/v1', '/v1/messages'],
    ['/v1/', '/v1/messages'],
    ['/proxy/anthropic', '/proxy/anthropic/v1/messages'],
  ])('base path %j reaches %s', (base, path) => {
    expect(messagesPath(base)).toBe(path);
  });
});
