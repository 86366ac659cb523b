import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';

/**
 * The mock's one-body endpoints — embeddings, moderations and token counts — apply a model's behaviour the way its
 * chat does: a bad body or a missing key is refused in the endpoint's own dialect, an injected status comes with its
 * Retry-After, and a stall before the headers leaves the caller with no answer at all (the gateway's timeout tests
 * depend on each of these, whichever endpoint they call).
 */
describe('mock provider: unary endpoints share chat\'s faults', () => {
  let mock: MockProviderServer;
  let base: string;

  const endpoints: Array<{ name: string; path: string; headers: Record<string, string>; keyChecked: boolean; body: { model: string } & Record<string, unknown>; answered: (body: Record<string, unknown>) => boolean }> = [
    {
      name: 'openai-embeddings', path: '/v1/embeddings', headers: { authorization: 'Bearer test-key-0123456789' }, keyChecked: false,
      body: { model: 'text-embedding-3-small', input: 'hello' }, answered: (body: Record<string, unknown>) => Array.isArray(body.data),
    },
    {
      name: 'openai-moderations', path: '/v1/moderations', headers: { authorization: 'Bearer test-key-0123456789' }, keyChecked: false,
      body: { model: 'omni-moderation-latest', input: 'hello' }, answered: (body: Record<string, unknown>) => Array.isArray(body.results),
    },
    {
      name: 'anthropic-count-tokens', path: '/v1/messages/count_tokens', headers: { 'x-api-key': 'test-key-0123456789', 'anthropic-version': '2023-06-01' }, keyChecked: true,
      body: { model: 'claude-test', messages: [{ role: 'user', content: 'hello' }] }, answered: (body: Record<string, unknown>) => typeof body.input_tokens === 'number',
    },
  ];

  const call = (endpoint: (typeof endpoints)[number], init: { body?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}) =>
    fetch(`${base}${endpoint.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(init.headers ?? endpoint.headers) },
      body: init.body ?? JSON.stringify(endpoint.body),
      signal: init.signal,
    });

  beforeAll(async () => {
    mock = new MockProviderServer();
    base = await mock.listen(0);
  });
  afterAll(async () => {
    await mock.close();
  });
  beforeEach(() => {
    mock.clearScenarios();
    mock.clearRequests();
  });

  test.each(endpoints)('$name: a body that is not JSON is a 400, logged as an error status', async (endpoint) => {
    const response = await call(endpoint, { body: '{"model":' });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('the body is not valid JSON');
    expect(mock.requests()[0]).toMatchObject({ format: endpoint.name, outcome: 'error-status' });
  });

  // OpenAI's own routes are not key-checked by the mock (only Azure's are), so this holds where a dialect checks one.
  test.each(endpoints.filter((endpoint) => endpoint.keyChecked))('$name: no key is refused before the body is read', async (endpoint) => {
    const response = await call(endpoint, { headers: {} });
    expect(response.status).toBe(401);
    expect(mock.requests()[0]).toMatchObject({ format: endpoint.name, model: null, outcome: 'error-status' });
  });

  test.each(endpoints)('$name: an injected 429 carries its Retry-After; the next call is answered', async (endpoint) => {
    mock.addScenario({ times: 1, behaviour: { status: 429, retryAfterSeconds: 7 } });
    const refused = await call(endpoint);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('7');
    const answered = await call(endpoint);
    expect(answered.status).toBe(200);
    expect(answered.headers.get('x-request-id')).toBe(`mock-${mock.requests()[1].seq}`);
    expect(endpoint.answered((await answered.json()) as Record<string, unknown>)).toBe(true);
    expect(mock.requests().map((request) => [request.model, request.outcome])).toEqual([
      [endpoint.body.model, 'error-status'],
      [endpoint.body.model, 'completed'],
    ]);
  });

  test.each(endpoints)('$name: a stall before the headers sends nothing until the caller gives up', async (endpoint) => {
    mock.addScenario({ times: 1, behaviour: { stall: 'before-headers' } });
    const outcome = await call(endpoint, { signal: AbortSignal.timeout(400) }).then((response) => `answered ${response.status}`, (error: Error) => error.name);
    expect(outcome).toBe('TimeoutError');
    expect(mock.requests()[0]).toMatchObject({ format: endpoint.name, model: endpoint.body.model });
    expect(mock.requests()[0].outcome).not.toBe('completed');
  });
});
