import type { ChatRequest } from '../../modules/canonical/index.js';
import { AnthropicAdapter } from '../../modules/providers/anthropic/anthropic-adapter.js';
import { preparedBody } from '../../modules/providers/prepared-body.js';
import { FixtureServer, chatRequest, collect, fixtureBytes, resolvedDeployment } from '../support/provider-fixtures.js';

/** A request that counts how often its history is read, i.e. how often an adapter translates it. */
function countingRequest(request: ChatRequest): { request: ChatRequest; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(request, {
    get(target, property, receiver) {
      if (property === 'messages') reads++;
      return Reflect.get(target, property, receiver);
    },
  });
  return { request: proxy, reads: () => reads };
}

const history = chatRequest({
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Zürich?' }] },
    { role: 'assistant', content: [], toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Zürich","unit":"celsius"}' }] },
    { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: '{"temperature":21}' }], isError: false },
  ] as ChatRequest['messages'],
});

describe('a provider adapter prepares a request once', () => {
  let server: FixtureServer;
  const adapter = new AnthropicAdapter();
  const deployment = resolvedDeployment('anthropic', { model: 'claude-first' });

  beforeAll(async () => {
    server = await new FixtureServer().start();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.seen.length = 0;
  });

  test('a retry of the same deployment sends the body prepared for the first attempt, without translating the history again', async () => {
    const { request, reads } = countingRequest(history);
    const afterAttempt: number[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      server.reply({ headers: { 'content-type': 'application/json' }, chunks: [fixtureBytes('anthropic', 'message.json')] });
      await adapter.chat(server.call(request, deployment));
      afterAttempt.push(reads());
    }
    expect(afterAttempt[0]).toBeGreaterThan(0);
    expect(afterAttempt[1]).toBe(afterAttempt[0]);
    expect(server.seen).toHaveLength(2);
    expect(server.seen[1].body).toEqual(server.seen[0].body);
    // The tool call's arguments went out as the object they encode, on both attempts.
    expect(server.seen[0].body.model).toBe('claude-first');
    expect(server.seen[0].body.messages[1].content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Zürich', unit: 'celsius' } }]);
  });

  test('another deployment (a later candidate, or the same one after a snapshot swap) and the streaming variant get bodies of their own', async () => {
    const { request, reads } = countingRequest(history);
    const other = resolvedDeployment('anthropic', { model: 'claude-second' });
    const afterCall: number[] = [];
    server.reply({ headers: { 'content-type': 'application/json' }, chunks: [fixtureBytes('anthropic', 'message.json')] });
    await adapter.chat(server.call(request, deployment));
    afterCall.push(reads());
    server.reply({ headers: { 'content-type': 'application/json' }, chunks: [fixtureBytes('anthropic', 'message.json')] });
    await adapter.chat(server.call(request, other));
    afterCall.push(reads());
    server.reply({ headers: { 'content-type': 'text/event-stream' }, chunks: [fixtureBytes('anthropic', 'stream-text.sse')] });
    await collect((await adapter.chatStream(server.call(request, other))).events);
    afterCall.push(reads());
    // Each of the three is translated: every call read the history anew.
    expect(afterCall[1]).toBeGreaterThan(afterCall[0]);
    expect(afterCall[2]).toBeGreaterThan(afterCall[1]);
    expect(server.seen.map((seen) => [seen.body.model, seen.body.stream ?? false])).toEqual([
      ['claude-first', false], ['claude-second', false], ['claude-second', true],
    ]);
  });

  test('preparedBody builds once per request, target and variant', () => {
    const request = {};
    const target = {};
    let builds = 0;
    const build = () => ({ built: ++builds });
    expect(preparedBody(request, target, 'buffered', build)).toBe('{"built":1}');
    expect(preparedBody(request, target, 'buffered', build)).toBe('{"built":1}');
    expect(preparedBody(request, target, 'stream', build)).toBe('{"built":2}');
    expect(preparedBody(request, {}, 'buffered', build)).toBe('{"built":3}');
    expect(preparedBody({}, target, 'buffered', build)).toBe('{"built":4}');
  });
});
