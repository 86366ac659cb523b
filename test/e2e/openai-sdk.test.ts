import OpenAI from 'openai';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * The official `openai` package against an openai-compatible provider: what the gateway sends upstream.
 * Text, streaming (with and without usage), tool calls, models, typed errors and the rest of the
 * client-visible behaviour are in the conformance matrix (conformance-matrix.test.ts).
 */
describe('OpenAI SDK against Switchyard', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test('the upstream gets the primary deployment with the provider credential as a Bearer token, not the client key', async () => {
    await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }] });
    const upstream = gw.mock.requests();
    expect(upstream).toHaveLength(1);
    expect(upstream[0].model).toBe('model-primary');
    expect(upstream[0].headers.authorization).toBe('Bear***56'); // "Bearer upstream-secret-value-123456", masked by the mock
  });

  test('streaming without include_usage: the gateway still asks upstream for usage (it bills from it)', async () => {
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'Stream please' }] });
    let usageChunks = 0;
    for await (const chunk of stream) if (chunk.usage) usageChunks++;
    expect(usageChunks).toBe(0);
    expect(gw.mock.requests()[0]).toMatchObject({ stream: true, includeUsage: true });
  });
});
