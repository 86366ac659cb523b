import { parseResponsesRequest } from '../../modules/inference/formats/responses/responses-request.js';
import { echoOf } from '../../modules/inference/formats/responses/responses-echo.js';

/** Responses bodies → the canonical request every provider adapter builds from. */
describe('parseResponsesRequest', () => {
  test('a string input is one user message; instructions become the leading system message', () => {
    const request = parseResponsesRequest({ model: 'alias', input: 'Hello', instructions: 'Be brief.' });
    expect(request.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    ]);
    expect(request).toMatchObject({ stream: false, n: 1, tools: [], toolChoice: null, responseFormat: null, maxOutputTokens: null });
    expect(echoOf(request)).toMatchObject({ instructions: 'Be brief.', textFormat: { type: 'text' }, toolChoice: 'auto' });
  });

  test('an assistant turn and the calls that follow it are one assistant message; outputs become tool messages', () => {
    const request = parseResponsesRequest({
      model: 'alias',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Rules.' }] },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_p', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
        { type: 'function_call', call_id: 'call_r', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_p', output: '18C' },
        { type: 'function_call_output', call_id: 'call_r', output: [{ type: 'input_text', text: '21C' }] },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Rules.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Checking.' }],
        toolCalls: [
          { id: 'call_p', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_r', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_p', content: [{ type: 'text', text: '18C' }] },
      { role: 'tool', toolCallId: 'call_r', content: [{ type: 'text', text: '21C' }] },
    ]);
  });

  test('consecutive assistant messages are one turn (providers that need alternating roles get one)', () => {
    const request = parseResponsesRequest({
      model: 'alias',
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'One.' },
        { role: 'assistant', content: 'Two.' },
        { role: 'user', content: 'Again' },
      ],
    });
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(request.messages[1].content).toEqual([{ type: 'text', text: 'One.' }, { type: 'text', text: 'Two.' }]);
  });

  test('tools, tool_choice, text.format and sampling map onto the canonical fields; the echo keeps the client shape', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const request = parseResponsesRequest({
      model: 'alias',
      input: 'Hi',
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: schema, strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } },
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      metadata: { team: 'search' },
      safety_identifier: 'user-hash',
      stream: true,
      store: false,
      include: [],
      truncation: 'disabled',
      stream_options: { include_obfuscation: false },
    });
    expect(request).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Weather', parameters: schema, strict: true }],
      toolChoice: { type: 'tool', name: 'get_weather' },
      responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true, description: null },
      maxOutputTokens: 64,
      temperature: 0.2,
      topP: 0.9,
      parallelToolCalls: false,
      metadata: { team: 'search' },
      user: 'user-hash',
      stream: true,
    });
    expect(echoOf(request)).toMatchObject({
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: schema, strict: true }],
      toolChoice: { type: 'function', name: 'get_weather' },
      textFormat: { type: 'json_schema', name: 'answer', strict: true },
      safetyIdentifier: 'user-hash',
    });
  });

  test('images: data: URLs carry their media type; https URLs pass as URLs', () => {
    const request = parseResponsesRequest({
      model: 'alias',
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }, { type: 'input_image', image_url: 'https://example.com/a.jpg', detail: 'low' }] }],
    });
    expect(request.messages[0].content).toEqual([
      { type: 'image', url: 'data:image/png;base64,AAAA', detail: null, mediaType: 'image/png' },
      { type: 'image', url: 'https://example.com/a.jpg', detail: 'low', mediaType: null },
    ]);
  });
});

describe('parseResponsesRequest: the Chat Completions parameters under their Responses names (issue 35)', () => {
  test('text.verbosity low/high is the canonical verbosity; medium, the default, asks for nothing; others are a 400', () => {
    expect(parseResponsesRequest({ model: 'alias', input: 'Hi', text: { verbosity: 'low' } }).verbosity).toBe('low');
    expect(parseResponsesRequest({ model: 'alias', input: 'Hi', text: { verbosity: 'medium' } }).verbosity).toBeNull();
    expect(() => parseResponsesRequest({ model: 'alias', input: 'Hi', text: { verbosity: 'loud' } })).toThrow(expect.objectContaining({ status: 400, param: 'text.verbosity' }));
  });

  test('prompt_cache_key, prompt_cache_retention and service_tier reach the canonical request; bad values are a 400', () => {
    expect(parseResponsesRequest({ model: 'alias', input: 'Hi', prompt_cache_key: 'k1', prompt_cache_retention: '24h', service_tier: 'flex' }))
      .toMatchObject({ promptCacheKey: 'k1', promptCacheRetention: '24h', serviceTier: 'flex' });
    expect(() => parseResponsesRequest({ model: 'alias', input: 'Hi', service_tier: 'standard_only' })).toThrow(expect.objectContaining({ status: 400, param: 'service_tier' }));
    expect(() => parseResponsesRequest({ model: 'alias', input: 'Hi', prompt_cache_retention: 'forever' })).toThrow(expect.objectContaining({ status: 400, param: 'prompt_cache_retention' }));
  });
});

