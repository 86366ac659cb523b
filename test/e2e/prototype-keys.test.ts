import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';

/**
 * Issue 8, observed item 8: body keys named like Object.prototype members were a 500 on
 * /v1/chat/completions (`NEUTRAL_VALUES[key]?.includes is not a function`) and silently dropped on
 * /v1/messages and by the admin API. Each is a 400 naming the key, in the envelope of the path, and
 * changes nothing.
 */
const ADMIN_TOKEN = 'admin-token-for-prototype-keys-0123';
const REQUEST_EVENTS = ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted', 'RequestRejected'];
const NAMES = ['constructor', 'toString', '__defineGetter__', 'valueOf', 'hasOwnProperty', '__proto__'];

/** The key added as raw JSON text: `{"__proto__": …}` cannot be built with an object literal. */
const withKey = (json: string, key: string, value = '1') => `${json.slice(0, -1)},"${key}":${value}}`;
const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
const messages = JSON.stringify({ model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

describe('keys named like Object.prototype members', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => gw.mock.clearRequests());

  test.each(NAMES)('top-level %s is a 400 unsupported_parameter on /v1/chat/completions, in the OpenAI envelope', async (name) => {
    const before = await gw.countEvents(REQUEST_EVENTS);
    for (const value of ['1', '"x"', 'null', '{}', '{"prototype":{"polluted":true}}']) {
      const response = await postJson(gw, '/v1/chat/completions', withKey(chat, name, value));
      expect(response.status).toBe(400);
      expect(response.json.error).toMatchObject({ code: 'unsupported_parameter', type: 'invalid_request_error' });
      expect(response.json.error.param).toMatch(new RegExp(`^${name}(\\.prototype)?$`));
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(gw.mock.requests()).toHaveLength(0);
    expect(await gw.countEvents(REQUEST_EVENTS)).toBe(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test.each(NAMES)('top-level %s is a 400 on /v1/messages, in the Anthropic envelope, never dropped', async (name) => {
    const response = await postJson(gw, '/v1/messages', withKey(messages, name), { authorization: '', 'x-api-key': gw.key });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(`'${name}'`) } });
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test.each([
    ['messages[0].constructor', { model: 'chat', messages: [{ role: 'user', content: 'hi', constructor: 'x' }] }],
    ['tools[0].function.toString', { model: 'chat', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', toString: 1 } }] }],
    ['metadata.hasOwnProperty', { model: 'chat', messages: [{ role: 'user', content: 'hi' }], metadata: { hasOwnProperty: 'x' } }],
    ['stream_options.valueOf', { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true, valueOf: true } }],
  ])('nested %s is refused by its path', async (param, body) => {
    const response = await postJson(gw, '/v1/chat/completions', body);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'unsupported_parameter', param });
  });

  test('nested in an Anthropic body: the dotted path is named', async () => {
    const body = { model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', __defineGetter__: 1 }] }], metadata: { user_id: 'u', valueOf: 1 } };
    const response = await postJson(gw, '/v1/messages', body, { authorization: '', 'x-api-key': gw.key });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toContain("'messages.0.content.0.__defineGetter__'");
  });

  test('embeddings refuse them too', async () => {
    const response = await postJson(gw, '/v1/embeddings', { model: 'chat', input: 'hi', toString: 'x' });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'unsupported_parameter', param: 'toString' });
  });

  test('the admin API names them as unknown fields and creates nothing', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    for (const name of ['constructor', 'toString', 'valueOf']) {
      const response = await postJson(gw, '/admin/v1/tenants', { id: `t-${name.toLowerCase()}`, [name]: 'x' }, admin);
      expect(response.status).toBe(400);
      expect(response.json.error).toMatchObject({ code: 'validation_failed', fields: [{ path: name, message: 'unknown field' }] });
      const created = await fetch(`${gw.url}/admin/v1/tenants/t-${name.toLowerCase()}`, { headers: admin });
      expect(created.status).toBe(404);
    }
  });

  test('inside a JSON Schema such names are ordinary properties and reach the provider intact', async () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string' } }, required: ['constructor'] };
    const response = await postJson(gw, '/v1/chat/completions', {
      model: 'chat', messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: schema } }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    });
    expect(response.status).toBe(200);
    const upstream = gw.mock.requests()[0].body as { tools: Array<{ function: { parameters: unknown } }>; response_format: { json_schema: { schema: unknown } } };
    expect(upstream.tools[0].function.parameters).toEqual(schema);
    expect(upstream.response_format.json_schema.schema).toEqual(schema);
  });
});
