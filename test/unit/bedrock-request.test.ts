import type { ChatRequest } from '../../modules/canonical/chat-request.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';
import { converseUnsupportedParameter, toConverseRequest } from '../../modules/providers/bedrock/bedrock-request.js';
import { chatRequest, fixtureJson, resolvedDeployment } from '../support/provider-fixtures.js';

const CLAUDE = resolvedDeployment('bedrock', { model: 'anthropic.claude-3-5-sonnet-20240620-v1:0' });
const unsupported = (request: ChatRequest) => converseUnsupportedParameter(request, CLAUDE);

const golden = fixtureJson('bedrock', 'converse-tool-use.json');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('Bedrock Converse request mapping', () => {
  test('the documentation example: system, tools with inputSchema.json, tool_choice required → any, inferenceConfig', () => {
    const request = parseOpenAiChatRequest(golden.openaiRequest);
    expect(unsupported(request)).toBeNull();
    // The documentation's request, plus what the gateway adds because it has stop sequences: Claude naming the matched one.
    expect(toConverseRequest(request)).toEqual({ ...golden.converseRequest, additionalModelResponseFieldPaths: ['/stop_sequence'] });
  });

  test('a tool round trip: assistant tool_calls → toolUse with parsed input, tool message → user toolResult', () => {
    const request = parseOpenAiChatRequest({ ...golden.openaiRequest, tool_choice: undefined, messages: golden.followUpOpenaiMessages });
    const body = toConverseRequest(request);
    expect(body.messages).toEqual(golden.followUpConverseMessages);
    expect(body.toolConfig?.toolChoice).toBeUndefined();
    expect((body.toolConfig?.tools[0] as { toolSpec: { name: string } }).toolSpec.name).toBe('top_song');
  });

  test('tool_choice maps auto → auto, a named function → tool, and none (without tool history) leaves the tools out', () => {
    const tools = golden.openaiRequest.tools;
    const messages = [{ role: 'user', content: 'hi' }];
    expect(toConverseRequest(parseOpenAiChatRequest({ model: 'm', messages, tools, tool_choice: 'auto' })).toolConfig?.toolChoice).toEqual({ auto: {} });
    expect(
      toConverseRequest(parseOpenAiChatRequest({ model: 'm', messages, tools, tool_choice: { type: 'function', function: { name: 'top_song' } } })).toolConfig
        ?.toolChoice,
    ).toEqual({ tool: { name: 'top_song' } });
    const none = parseOpenAiChatRequest({ model: 'm', messages, tools, tool_choice: 'none' });
    expect(unsupported(none)).toBeNull();
    expect(toConverseRequest(none).toolConfig).toBeUndefined();
  });

  test('parallel tool results and a following user text merge into one user turn, so roles alternate', () => {
    const request = parseOpenAiChatRequest({
      model: 'm',
      tools: golden.openaiRequest.tools,
      messages: [
        { role: 'system', content: 'one' },
        { role: 'user', content: 'Compare WZPZ and WKRP' },
        {
          role: 'assistant',
          content: 'Looking both up.',
          tool_calls: [
            { id: 't1', type: 'function', function: { name: 'top_song', arguments: '{"sign":"WZPZ"}' } },
            { id: 't2', type: 'function', function: { name: 'top_song', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: 'Elemental Hotel' },
        { role: 'tool', tool_call_id: 't2', content: 'Who Can It Be Now' },
        { role: 'user', content: 'Which is older?' },
        { role: 'developer', content: 'two' },
      ],
    });
    const body = toConverseRequest(request);
    expect(body.system).toEqual([{ text: 'one' }, { text: 'two' }]);
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1].content).toEqual([
      { text: 'Looking both up.' },
      { toolUse: { toolUseId: 't1', name: 'top_song', input: { sign: 'WZPZ' } } },
      { toolUse: { toolUseId: 't2', name: 'top_song', input: {} } },
    ]);
    expect(body.messages[2].content).toEqual([
      { toolResult: { toolUseId: 't1', content: [{ text: 'Elemental Hotel' }] } },
      { toolResult: { toolUseId: 't2', content: [{ text: 'Who Can It Be Now' }] } },
      { text: 'Which is older?' },
    ]);
  });

  test('a base64 data: image becomes image bytes with its format; blank text parts are dropped', () => {
    const request = parseOpenAiChatRequest({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'auto' } },
          ],
        },
      ],
    });
    expect(unsupported(request)).toBeNull();
    expect(toConverseRequest(request).messages[0].content).toEqual([
      { text: 'What is in this picture?' },
      { image: { format: 'png', source: { bytes: PNG } } },
    ]);
  });

  test('metadata and user travel as requestMetadata', () => {
    const request = chatRequest({ metadata: { team: 'radio' }, user: 'user-42' });
    expect(unsupported(request)).toBeNull();
    expect(toConverseRequest(request).requestMetadata).toEqual({ team: 'radio', user: 'user-42' });
    expect(toConverseRequest(chatRequest()).requestMetadata).toBeUndefined();
  });

  test('parameters Converse cannot honour are named, never dropped', () => {
    const image = (url: string, detail: 'low' | null = null) =>
      chatRequest({ messages: [{ role: 'user', content: [{ type: 'image', url, detail, mediaType: null }] }] });
    expect(unsupported(image('https://example.com/cat.png'))).toBe('messages[0].content[0].image_url.url');
    expect(unsupported(image('data:image/tiff;base64,AAAA'))).toBe('messages[0].content[0].image_url.url');
    expect(unsupported(image(`data:image/png;base64,${PNG}`, 'low'))).toBe('messages[0].content[0].image_url.detail');
    expect(unsupported(chatRequest({ n: 2 }))).toBe('n');
    expect(unsupported(chatRequest({ seed: 7 }))).toBe('seed');
    expect(unsupported(chatRequest({ responseFormat: { type: 'json_object' } }))).toBe('response_format');
    expect(unsupported(chatRequest({ parallelToolCalls: false }))).toBe('parallel_tool_calls');
    expect(unsupported(chatRequest({ parallelToolCalls: true }))).toBeNull();
    expect(
      unsupported(chatRequest({ tools: [{ name: 'f', description: null, parameters: { type: 'object' }, strict: true }] })),
    ).toBe('tools[].function.strict');
    expect(unsupported(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }], name: 'ann' }] }))).toBe(
      'messages[0].name',
    );
    const withHistory = chatRequest({
      toolChoice: { type: 'none' },
      tools: [{ name: 'f', description: null, parameters: { type: 'object' }, strict: null }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'a', name: 'f', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'a', content: [{ type: 'text', text: 'ok' }] },
      ],
    });
    expect(unsupported(withHistory)).toBe('tool_choice');
    const badArguments = chatRequest({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'a', name: 'f', arguments: '[1,2]' }] },
      ],
    });
    expect(unsupported(badArguments)).toBe('messages[1].tool_calls[0].function.arguments');
    expect(unsupported(chatRequest({ user: 'u'.repeat(257) }))).toBe('user');
    expect(unsupported(chatRequest({ metadata: { user: 'a' }, user: 'b' }))).toBe('user');
    expect(unsupported(chatRequest({ metadata: { 'bad\u0000key': 'a' } }))).toBe('metadata');
  });
});
