import type { ChatMessage } from '../../modules/canonical/chat-request.js';
import { GeminiRequestProblem, toGeminiRequest } from '../../modules/providers/gemini/gemini-request.js';
import { chatRequest } from '../support/provider-fixtures.js';

const text = (value: string) => ({ type: 'text' as const, text: value });
const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

describe('canonical request → Gemini generateContent body', () => {
  test('system messages become systemInstruction; user and assistant turns become user/model contents', () => {
    const body = toGeminiRequest(
      chatRequest({
        messages: [
          { role: 'system', content: [text('You are terse.')] },
          { role: 'system', content: [text('Answer in French.')] },
          { role: 'user', content: [text('Hi')] },
          { role: 'assistant', content: [text('Bonjour')], toolCalls: [] },
          { role: 'user', content: [text('Capital of Italy?')] },
        ],
      }),
    );
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Bonjour' }] },
      { role: 'user', parts: [{ text: 'Capital of Italy?' }] },
    ]);
    expect(body).not.toHaveProperty('generationConfig');
    expect(body).not.toHaveProperty('tools');
  });

  test('generation parameters map to generationConfig, n to candidateCount', () => {
    const body = toGeminiRequest(chatRequest({ temperature: 0.2, topP: 0.9, maxOutputTokens: 256, stop: ['END', '###'], n: 2, seed: 7 }));
    expect(body.generationConfig).toEqual({ temperature: 0.2, topP: 0.9, maxOutputTokens: 256, stopSequences: ['END', '###'], candidateCount: 2, seed: 7 });
  });

  test('a temperature of 0 is sent, not dropped as falsy', () => {
    expect(toGeminiRequest(chatRequest({ temperature: 0 })).generationConfig).toEqual({ temperature: 0 });
  });

  test('images: base64 data URLs become inlineData, http URLs fileData with a MIME type', () => {
    const body = toGeminiRequest(
      chatRequest({
        messages: [
          {
            role: 'user',
            content: [
              text('What is in these?'),
              { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail: null, mediaType: 'image/png' },
              { type: 'image', url: 'https://example.com/photos/cat.webp?size=large', detail: 'high', mediaType: null },
              { type: 'image', url: 'https://example.com/photos/dog', detail: null, mediaType: null },
            ],
          },
        ],
      }),
    );
    expect(body.contents[0].parts).toEqual([
      { text: 'What is in these?' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/photos/cat.webp?size=large' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photos/dog' } },
    ]);
  });

  test('a data: URL that is not base64 cannot be sent inline: the messages parameter is refused', () => {
    const request = chatRequest({ messages: [{ role: 'user', content: [{ type: 'image', url: 'data:image/svg+xml,<svg/>', detail: null, mediaType: null }] }] });
    expect(() => toGeminiRequest(request)).toThrow(expect.objectContaining({ name: 'GeminiRequestProblem', param: 'messages' }));
  });

  test('tools become functionDeclarations without the JSON Schema keywords Gemini rejects', () => {
    const body = toGeminiRequest(chatRequest({ tools: [weatherTool, { name: 'ping', description: null, parameters: { type: 'object', properties: {} }, strict: null }] }));
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: {
              type: 'OBJECT',
              properties: { city: { type: 'STRING', description: 'City name' }, unit: { type: 'STRING', enum: ['celsius', 'fahrenheit'] } },
              required: ['city'],
            },
          },
          // A tool without arguments sends no parameters: Gemini rejects an OBJECT without properties.
          { name: 'ping' },
        ],
      },
    ]);
    expect(JSON.stringify(body)).not.toMatch(/additionalProperties|\$schema|strict/);
  });

  test.each([
    [{ type: 'auto' as const }, { mode: 'AUTO' }],
    [{ type: 'none' as const }, { mode: 'NONE' }],
    [{ type: 'required' as const }, { mode: 'ANY' }],
    [{ type: 'tool' as const, name: 'get_weather' }, { mode: 'ANY', allowedFunctionNames: ['get_weather'] }],
  ])('tool_choice %j → functionCallingConfig %j', (choice, config) => {
    expect(toGeminiRequest(chatRequest({ tools: [weatherTool], toolChoice: choice })).toolConfig).toEqual({ functionCallingConfig: config });
  });

  test('a multi-turn tool conversation: calls become functionCall parts, results functionResponse parts named by the call', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: [text('Weather in Paris and Rome?')] },
      {
        role: 'assistant',
        content: [],
        toolCalls: [
          { id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'call_1', name: 'get_time', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: [text('14:05')] },
      { role: 'tool', toolCallId: 'call_0', content: [text('{"temperature":21,"sky":"clear"}')] },
      { role: 'user', content: [text('And tomorrow?')] },
      { role: 'assistant', content: [text('Checking.')], toolCalls: [{ id: 'call_0', name: 'get_forecast', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', toolCallId: 'call_0', content: [text('service unavailable')], isError: true },
    ];
    const body = toGeminiRequest(chatRequest({ messages, tools: [weatherTool] }));
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: { city: 'Rome' } } }],
      },
      // Consecutive tool results and the next user message share one user turn (roles must alternate).
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
          { functionResponse: { name: 'get_weather', response: { temperature: 21, sky: 'clear' } } },
          { text: 'And tomorrow?' },
        ],
      },
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_forecast', args: { city: 'Paris' } } }] },
      // The reused id `call_0` resolves to the nearest earlier call, and a failed tool reports an error.
      { role: 'user', parts: [{ functionResponse: { name: 'get_forecast', response: { error: 'service unavailable' } } }] },
    ]);
  });

  test('a tool result for a call no assistant message made is refused, naming messages', () => {
    const request = chatRequest({ messages: [{ role: 'user', content: [text('x')] }, { role: 'tool', toolCallId: 'call_9', content: [text('1')] }] });
    expect(() => toGeminiRequest(request)).toThrow(GeminiRequestProblem);
    expect(() => toGeminiRequest(request)).toThrow(/call_9/);
  });

  test('earlier call arguments that are not a JSON object are refused rather than guessed', () => {
    const request = chatRequest({
      messages: [
        { role: 'user', content: [text('x')] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'call_0', name: 'f', arguments: '["not", "an object"]' }] },
        { role: 'tool', toolCallId: 'call_0', content: [text('1')] },
      ],
    });
    expect(() => toGeminiRequest(request)).toThrow(expect.objectContaining({ param: 'messages' }));
  });

  test('json_object asks for application/json; json_schema adds the converted responseSchema', () => {
    expect(toGeminiRequest(chatRequest({ responseFormat: { type: 'json_object' } })).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const body = toGeminiRequest(
      chatRequest({
        responseFormat: {
          type: 'json_schema',
          name: 'capital',
          strict: true,
          description: null,
          schema: { type: 'object', properties: { city: { type: 'string' }, population: { type: ['integer', 'null'] } }, required: ['city', 'population'], additionalProperties: false },
        },
      }),
    );
    expect(body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'OBJECT',
        properties: { city: { type: 'STRING' }, population: { type: 'INTEGER', nullable: true } },
        required: ['city', 'population'],
      },
    });
  });

  test('a recursive response schema cannot be expressed: response_format is named', () => {
    const schema = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' };
    const request = chatRequest({ responseFormat: { type: 'json_schema', name: 'list', schema, strict: null, description: null } });
    expect(() => toGeminiRequest(request)).toThrow(expect.objectContaining({ param: 'response_format' }));
  });
});
