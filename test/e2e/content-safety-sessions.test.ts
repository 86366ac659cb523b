import OpenAI from 'openai';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { mockProviderYaml } from '../support/anthropic-yaml.js';
import { requireService } from '../support/services.js';

/**
 * Session-scoped tokenization (issue 36 item 4): with `tokenScope: session`, an `x-session-id` and SWITCHYARD_PII_KEY,
 * placeholders stay the same across a session's turns and are recovered by any node (the mappings live in Redis,
 * encrypted). Two gateways here share Redis and the key — and nothing else: each has its own event store.
 */
const redisUrl = requireService('REDIS_URL');
const PII_KEY_ENV = 'SY_TEST_PII_KEY';
const PLACEHOLDER = /\[PII1_[A-Z0-9_]+\]/g;

function sessionYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}deployments:
  - id: gpt-primary
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
contentPolicies:
  - id: pii-session
    input: { email: tokenize }
    tokenScope: session
aliases:
  - name: gpt
    routes:
      - { deployment: gpt-primary, priority: 0 }
tenants:
  - id: acme
    contentPolicy: pii-session
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference]
`;
}

(redisUrl ? describe : describe.skip)('session-scoped placeholders across nodes', () => {
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  const email = 'ada.lovelace@example.com';

  beforeAll(async () => {
    process.env[PII_KEY_ENV] = 'session-test-pii-key-0123456789abcdef0123456789';
    process.env.SWITCHYARD_PII_KEY = `env:${PII_KEY_ENV}`;
    const environment = { redisUrl, contentSafety: { piiKeyReference: `env:${PII_KEY_ENV}` } };
    [nodeA, nodeB] = await Promise.all([startTestGateway({ yaml: sessionYaml, environment }), startTestGateway({ yaml: sessionYaml, environment })]);
  });
  afterAll(async () => {
    await Promise.all([nodeA?.close(), nodeB?.close()]);
    delete process.env.SWITCHYARD_PII_KEY;
  });

  const client = (node: TestGateway, session: string) =>
    new OpenAI({ baseURL: `${node.url}/v1`, apiKey: node.key, maxRetries: 0, defaultHeaders: { 'x-session-id': session } });
  const sentPlaceholders = (node: TestGateway) => JSON.stringify(node.mock.requests().map((r) => r.body)).match(PLACEHOLDER) ?? [];

  test('one session, two nodes: the same value gets the same placeholder; another session gets another', async () => {
    const session = `s-${Date.now()}`;
    await client(nodeA, session).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `I am ${email}` }] });
    await client(nodeB, session).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `Still ${email}` }] });
    await client(nodeB, `${session}-other`).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `Also ${email}` }] });
    const [a] = sentPlaceholders(nodeA);
    const [b, other] = sentPlaceholders(nodeB);
    expect(a).toBeDefined();
    expect(b).toBe(a);
    expect(other).not.toBe(a);
  });

  test('a placeholder made on node A is recovered on node B in a later turn of the session (history holding the placeholder)', async () => {
    const session = `t-${Date.now()}`;
    nodeA.mock.clearRequests();
    await client(nodeA, session).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `Remember ${email}` }] });
    const [placeholder] = sentPlaceholders(nodeA);
    nodeB.mock.addScenario({ times: 1, behaviour: { text: `You said ${placeholder}` } });
    // The client kept the placeholder (from a log, or a tool that saw the tokenized text) and sends it back.
    const answer = await client(nodeB, session).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `What was ${placeholder}?` }] });
    expect(answer.choices[0].message.content).toBe(`You said ${email}`);
    // The same placeholder in another session, or without one, is never recovered.
    nodeB.mock.addScenario({ times: 1, behaviour: { text: `You said ${placeholder}` } });
    const stranger = await client(nodeB, `${session}-x`).chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `What was ${placeholder}?` }] });
    expect(stranger.choices[0].message.content).toBe(`You said ${placeholder}`);
  });

  test('Redis holds no value in the clear: the entries are AES-GCM sealed and expire', async () => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl!);
    try {
      const keys = await redis.keys('switchyard:pii:*');
      expect(keys.length).toBeGreaterThan(0);
      const values = await redis.mget(keys);
      for (const value of values) expect(value).not.toContain('example.com');
      const ttl = await redis.ttl(keys[0]);
      expect(ttl).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
