import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';

const base = { model: 'chat', messages: [{ role: 'user', content: 'hi' }] };

function rejects(body: unknown): GatewayError {
  try {
    parseOpenAiChatRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a rejection');
}

describe('OpenAI chat request parsing', () => {
  test('maps a full request onto the canonical model', () => {
    const request = parseOpenAiChatRequest({
      ...base,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      ],
      max_completion_tokens: 100, temperature: 0.2, top_p: 0.9, stop: 'END', stream: true, stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'look', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'look' } }, parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      seed: 7, user: 'u-1', metadata: { team: 'search' }, service_tier: 'auto', store: false,
    });
    expect(request.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(request.messages[1].content[1]).toEqual({ type: 'image', url: 'https://example.com/cat.png', detail: 'low', mediaType: null });
    expect(request).toMatchObject({
      maxOutputTokens: 100, temperature: 0.2, topP: 0.9, stop: ['END'], stream: true, includeUsage: true,
      toolChoice: { type: 'tool', name: 'look' }, parallelToolCalls: false, seed: 7, user: 'u-1', metadata: { team: 'search' },
      responseFormat: { type: 'json_schema', name: 'answer', strict: true },
    });
  });

  test.each([
    ['max_tokens and max_completion_tokens disagree', { ...base, max_tokens: 5, max_completion_tokens: 6 }, 'max_completion_tokens'],
    ['temperature out of range', { ...base, temperature: 3 }, 'temperature'],
    ['stream_options without stream', { ...base, stream_options: { include_usage: true } }, 'stream_options'],
    ['a tool message without tool_call_id', { ...base, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    ['an image in a system message', { ...base, messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }, 'messages[0].content[0]'],
    ['tool_choice naming an unknown tool', { ...base, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
    ['a bad tool name', { ...base, tools: [{ type: 'function', function: { name: 'has space' } }] }, 'tools[0].function.name'],
    ['too many stop sequences', { ...base, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['an unknown role', { ...base, messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
  ])('rejects %s with 400 naming the parameter', (_name, body, param) => {
    const error = rejects(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  test('an unknown parameter is refused by name; known ones are parsed (routing judges them), defaults accepted', () => {
    expect(rejects({ ...base, audio_voice: 'alloy' })).toMatchObject({ code: 'unsupported_parameter', param: 'audio_voice' });
    expect(parseOpenAiChatRequest({ ...base, presence_penalty: 0.5, logprobs: true, top_logprobs: 2 })).toMatchObject({ presencePenalty: 0.5, logprobs: true, topLogprobs: 2 });
    expect(() => parseOpenAiChatRequest({ ...base, presence_penalty: 0, frequency_penalty: null, logprobs: false, logit_bias: {} })).not.toThrow();
    expect(rejects({ ...base, presence_penalty: 3 })).toMatchObject({ code: 'invalid_request', param: 'presence_penalty' });
    expect(rejects({ ...base, top_logprobs: 3 })).toMatchObject({ code: 'invalid_request', param: 'top_logprobs' });
    expect(rejects({ ...base, reasoning_effort: 'extreme' })).toMatchObject({ code: 'invalid_request', param: 'reasoning_effort' });
  });

  test('a body that is not an object is a clear 400', () => {
    expect(rejects([1, 2])).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(rejects({ messages: base.messages })).toMatchObject({ param: 'model' });
  });
});

describe('OpenAI chat request parsing: what the client survey found (issue 35)', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], title: 'Weather' };

  test('JSON mode with a schema (Together/Fireworks style, Instructor JSON_SCHEMA mode) is a json_schema request, not plain JSON mode', () => {
    expect(parseOpenAiChatRequest({ ...base, response_format: { type: 'json_object', schema } }).responseFormat)
      .toEqual({ type: 'json_schema', name: 'Weather', schema, strict: null, description: null });
    // A schema without a usable title gets a neutral name.
    expect(parseOpenAiChatRequest({ ...base, response_format: { type: 'json_object', schema: { type: 'object', title: 'a title' } } }).responseFormat)
      .toMatchObject({ type: 'json_schema', name: 'response' });
    expect(parseOpenAiChatRequest({ ...base, response_format: { type: 'json_object' } }).responseFormat).toEqual({ type: 'json_object' });
  });

  test('other keys in JSON mode are refused by name, a schema that is not an object is a 400', () => {
    expect(rejects({ ...base, response_format: { type: 'json_object', grammar: 'root ::= x' } })).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'response_format.grammar' });
    expect(rejects({ ...base, response_format: { type: 'json_object', schema: 'object' } })).toMatchObject({ status: 400, param: 'response_format.schema' });
  });

  test('prompt_cache_retention: in_memory or 24h, anything else a 400', () => {
    expect(parseOpenAiChatRequest({ ...base, prompt_cache_retention: '24h' }).promptCacheRetention).toBe('24h');
    expect(parseOpenAiChatRequest({ ...base, prompt_cache_retention: 'in_memory' }).promptCacheRetention).toBe('in_memory');
    expect(rejects({ ...base, prompt_cache_retention: '7d' })).toMatchObject({ status: 400, param: 'prompt_cache_retention' });
  });
});
