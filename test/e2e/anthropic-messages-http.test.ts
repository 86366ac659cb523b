import type { RequestAdmitted } from '../../events/request-events.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { anthropicYaml } from '../support/anthropic-yaml.js';
import { canonicalJson } from '../../src/kernel/canonical-json.js';

const REQUEST_EVENTS = ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted', 'RequestRejected'];
const hello = { model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }] };

/** `POST /v1/messages` over raw HTTP, authenticated the way Anthropic clients do (x-api-key). */
describe('POST /v1/messages (raw HTTP)', () => {
  let gw: TestGateway;
  let anthropicHeaders: Record<string, string>;
  const send = (body: unknown, headers: Record<string, string> = {}, path = '/v1/messages') => postJson(gw, path, body, { ...anthropicHeaders, ...headers });

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: anthropicYaml });
    anthropicHeaders = { authorization: '', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' };
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('bad input gets the Anthropic envelope, a helpful message, and appends no events', () => {
    const cases: Array<[string, () => ReturnType<typeof send>, number, string, RegExp]> = [
      ['malformed JSON', () => send('{"model": "claude",'), 400, 'invalid_request_error', /not valid JSON/],
      ['malformed JSON on /v1/messages?beta=true (as SDK beta calls send)', () => send('{"model":', {}, '/v1/messages?beta=true'), 400, 'invalid_request_error', /not valid JSON/],
      ['an empty body', () => send(''), 400, 'invalid_request_error', /JSON/],
      ['a body over 4 MiB', () => send({ ...hello, messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024 + 10) }] }), 413, 'request_too_large', /4 MiB/],
      ['no API key', () => send(hello, { 'x-api-key': '' }), 401, 'authentication_error', /Missing API key/],
      ['an unknown API key', () => send(hello, { 'x-api-key': 'sk-sy-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 401, 'authentication_error', /Incorrect API key/],
      ['an unknown model', () => send({ ...hello, model: 'claude-9000' }), 404, 'not_found_error', /claude-9000/],
      ['a deployment id used as model', () => send({ ...hello, model: 'claude-primary' }), 404, 'not_found_error', /claude-primary/],
      ['missing max_tokens', () => send({ model: 'claude', messages: hello.messages }), 400, 'invalid_request_error', /max_tokens: Field required/],
      ['top_k that is not a positive integer', () => send({ ...hello, top_k: 0 }), 400, 'invalid_request_error', /top_k: must be an integer/],
      ['cache_control that is not ephemeral', () => send({ ...hello, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] }] }), 400, 'invalid_request_error', /messages\.0\.content\.0\.cache_control/],
      ['thinking on an alias whose routes do not reason', () => send({ ...hello, max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 } }), 400, 'invalid_request_error', /lack reasoning/],
      ['a wrong role', () => send({ ...hello, messages: [{ role: 'system', content: 'x' }] }), 400, 'invalid_request_error', /messages\.0\.role/],
      ['temperature out of range', () => send({ ...hello, temperature: 2 }), 400, 'invalid_request_error', /temperature: must be a number from 0 to 1/],
      ['an unknown route under /v1/messages', () => send(hello, {}, '/v1/messages/batches'), 404, 'not_found_error', /Unknown route/],
    ];
    test.each(cases)('%s', async (_name, request, status, type, message) => {
      const before = await gw.countEvents(REQUEST_EVENTS);
      const response = await request();
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.json).toEqual({ type: 'error', error: { type, message: expect.stringMatching(message) } });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(gw.mock.requests()).toHaveLength(0);
      expect(await gw.countEvents(REQUEST_EVENTS)).toBe(before);
    });

    test('the OpenAI path keeps the OpenAI envelope for the same malformed JSON', async () => {
      const response = await postJson(gw, '/v1/chat/completions', '{"model": "gpt",');
      expect(response.status).toBe(400);
      expect(response.json.error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error' });
      expect(response.json.type).toBeUndefined();
    });
  });

  test('Bearer auth works too, and the request is recorded with clientFormat anthropic', async () => {
    const response = await postJson(gw, '/v1/messages', hello);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ type: 'message', role: 'assistant', model: 'claude', stop_reason: 'end_turn' });
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    expect((events[0].data as RequestAdmitted['data'])).toMatchObject({ clientFormat: 'anthropic', stream: false, reservedOutputTokens: 64 });
    expect(canonicalJson(events)).not.toMatch(/Hello there|Switchyard routes/);
  });

  test('SSE: every frame has a named event matching its data type; terminal events are committed before message_stop', async () => {
    const response = await send({ ...hello, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = response.text.split('\n\n').filter(Boolean).map((block) => {
      const lines = block.split('\n');
      expect(lines).toHaveLength(2);
      return { event: lines[0].replace(/^event: /, ''), data: JSON.parse(lines[1].replace(/^data: /, '')) };
    });
    for (const frame of frames) expect(frame.data.type).toBe(frame.event);
    expect(frames.map((f) => f.event).filter((e) => e !== 'content_block_delta')).toEqual([
      'message_start', 'ping', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    const delta = frames.find((f) => f.event === 'message_delta')!.data;
    expect(delta.usage.output_tokens).toBe(12);
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    expect(events[1].data).toMatchObject({ usage: { input: delta.usage.input_tokens, output: 12 }, usageEvidence: 'provider' });
  });

  test('an upstream stream that breaks before any output falls back; the client sees one clean message', async () => {
    gw.mock.addScenario({ model: 'claude-upstream', times: 1, behaviour: { malformedAfterChunks: 0 } });
    const response = await send({ ...hello, stream: true });
    expect(response.status).toBe(200);
    expect(response.text.match(/event: message_start/g)).toHaveLength(1);
    expect(response.text).toContain('event: message_stop');
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['claude-upstream', 'claude-backup-upstream']);
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    const attempts = events.filter((e) => e.type === 'AttemptFinished').map((e) => e.data as { outcome: string; errorClass: string | null });
    expect(attempts).toEqual([
      expect.objectContaining({ outcome: 'failed', errorClass: 'malformed_response' }),
      expect.objectContaining({ outcome: 'success', errorClass: null }),
    ]);
  });

  test('a provider 400 (invalid_request_error) is not retried and reaches the client in the Anthropic envelope', async () => {
    gw.mock.addScenario({ model: 'claude-upstream', behaviour: { status: 400 } });
    const response = await send(hello);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('provider returned 400') } });
    expect(response.text).not.toContain(gw.mockUrl);
    expect(gw.mock.requests()).toHaveLength(1);
  });
});
