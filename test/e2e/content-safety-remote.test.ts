import { createHmac } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import type { RequestAdmitted, RequestCompleted, RequestRejected } from '../../events/request-events.js';
import { contentPolicyProblems } from '../../modules/content-safety/index.js';
import { AdminClient } from '../support/admin-client.js';
import { mockProviderYaml } from '../support/anthropic-yaml.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';

/**
 * Remote checks of a content policy (issue 36 item 6): a webhook guardrail of the operator's own, here a node:http
 * server of the test's. It is asked after the local checks (a local block never calls it), on the request before
 * dispatch and on the buffered answer before it is sent; it sees the text as the local checks left it (tokenized,
 * never the value); its signature verifies; without a verdict (slow, down) a fail-open policy lets the request
 * through (counted) and a fail-closed one refuses it (503 guardrail_unavailable, nothing sent, RequestRejected).
 */

type Verdict = 'allow' | 'block' | 'slow' | 'error';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
  body: { type: string; requestId: string; tenantId: string; policy: { id: string; version: number }; direction: 'input' | 'output'; texts: string[] };
}

/** The operator's webhook: answers each direction as the test says, and records what it was sent. */
class OperatorWebhook {
  readonly received: Received[] = [];
  verdict: Record<'input' | 'output', Verdict> = { input: 'allow', output: 'allow' };
  private readonly server: Server = createServer((request, response) => this.answer(request, response));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw) as Received['body'];
      this.received.push({ path: request.url ?? '', headers: request.headers, raw, body });
      const verdict = this.verdict[body.direction];
      if (verdict === 'slow') {
        const timer = setTimeout(() => response.end(JSON.stringify({ action: 'allow' })), 2_000);
        response.on('close', () => clearTimeout(timer));
        return;
      }
      if (verdict === 'error') {
        response.writeHead(500).end('{"error":"down for maintenance"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(verdict === 'block' ? { action: 'block', reason: 'mentions an embargoed launch' } : { action: 'allow' }));
    });
  }
}

/** A port nothing listens on: connections are refused. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const SECRET_ENV = 'SY_TEST_GUARDRAIL_KEY';
const SECRET = 'guardrail-hmac-secret-0123456789abcdef';
const ADMIN_TOKEN = 'sy-admin-content-safety-remote-token-0123456789';

function remoteYaml(hookUrl: string, downUrl: string) {
  const webhook = (url: string, failOpen: boolean, extra = '') => `{ url: "${url}", timeoutMs: 300, failOpen: ${failOpen}, allowPrivateNetwork: true${extra} }`;
  return (mockUrl: string, keyEnv: string) => `
providers:
${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}deployments:
  - id: gpt-primary
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming, tools]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: embed-primary
    provider: mock-openai
    model: text-embedding-3-small
    capabilities: [embeddings]
    contextWindow: 8191
    price: { inputPer1M: "0.02", outputPer1M: "0" }
contentPolicies:
  - id: hooked
    input: { email: tokenize, card: block }
    webhook: ${webhook(`${hookUrl}/closed`, false, `, secret: "env:${SECRET_ENV}", directions: [input, output]`)}
  - id: hooked-open
    webhook: ${webhook(`${hookUrl}/open`, true)}
  - id: down-closed
    webhook: ${webhook(downUrl, false)}
  - id: down-open
    webhook: ${webhook(downUrl, true)}
aliases:
${['checked:hooked', 'open:hooked-open', 'down-closed:down-closed', 'down-open:down-open'].map((pair) => {
    const [name, policy] = pair.split(':');
    return `  - name: ${name}\n    contentPolicy: ${policy}\n    routes:\n      - { deployment: gpt-primary, priority: 0 }\n`;
  }).join('')}  - name: embed-checked
    contentPolicy: hooked
    routes:
      - { deployment: embed-primary, priority: 0 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

describe('remote checks: a webhook guardrail', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let admin: AdminClient;
  const hook = new OperatorWebhook();

  beforeAll(async () => {
    process.env[SECRET_ENV] = SECRET;
    const hookUrl = await hook.listen();
    gw = await startTestGateway({ yaml: remoteYaml(hookUrl, await refusingUrl()), environment: { adminToken: ADMIN_TOKEN } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
  });
  afterAll(async () => {
    await gw?.close();
    await hook.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
    hook.received.length = 0;
    hook.verdict = { input: 'allow', output: 'allow' };
  });

  const ask = (model: string, content: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();
  const refusal = async (model: string, content: string) => {
    const error = await ask(model, content).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    return error as InstanceType<typeof OpenAI.APIError>;
  };
  const requestIdOf = (error: InstanceType<typeof OpenAI.APIError>) => error.headers?.get('x-request-id') as string;
  // A refusal's RequestRejected is committed after the answer (default durability): wait for it, briefly.
  const recorded = async (requestId: string) => {
    for (let tries = 0; ; tries++) {
      const events = await gw.requestEvents(requestId);
      if (events.length > 0 || tries >= 50) return events;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  describe('unhappy configuration first: refused when applied, nothing changes', () => {
    test('a webhook at a metadata address, even with allowPrivateNetwork', async () => {
      const response = await admin.put('/content-policies/metadata-hook', { webhook: { url: 'http://169.254.169.254/latest/meta-data', allowPrivateNetwork: true } });
      expect(response.status).toBe(400);
      expect(response.text).toMatch(/webhook\.url: points at a cloud metadata address/);
      expect((await admin.get('/content-policies/metadata-hook')).status).toBe(404);
    });

    test('a webhook secret that does not resolve on this node: 422, nothing defined', async () => {
      const response = await admin.put('/content-policies/unsigned-hook', { webhook: { url: 'https://guard.example/check', secret: 'env:SY_TEST_ABSENT_GUARDRAIL_KEY' } });
      expect(response.status).toBe(422);
      expect(response.json.error).toMatchObject({ code: 'invalid_content_policy', message: expect.stringMatching(/webhook\.secret: env:SY_TEST_ABSENT_GUARDRAIL_KEY cannot be resolved/) });
      expect((await admin.get('/content-policies/unsigned-hook')).status).toBe(404);
    });

    test('the same in the configuration file: the gateway does not start, and says where', async () => {
      const yaml = (mockUrl: string, keyEnv: string) => remoteYaml('http://127.0.0.1:9', 'http://127.0.0.1:9')(mockUrl, keyEnv)
        .replace('secret: "env:SY_TEST_GUARDRAIL_KEY"', 'secret: "env:SY_TEST_ABSENT_GUARDRAIL_KEY"');
      await expect(startTestGateway({ yaml })).rejects.toThrow(/contentPolicies\[0\]\.webhook\.secret: env:SY_TEST_ABSENT_GUARDRAIL_KEY cannot be resolved/);
    });

    test('a private address without allowPrivateNetwork, a secret given as a value, a timeout above the maximum, an unknown direction', () => {
      const problems = contentPolicyProblems({
        webhook: { url: 'http://10.0.0.8/check', secret: 'plain-secret', timeoutMs: 60_000, directions: ['input', 'sideways'], retries: 3 },
      }, 'contentPolicies[0]');
      expect(problems).toEqual(expect.arrayContaining([
        expect.stringMatching(/^contentPolicies\[0\]\.webhook\.url: points at a private address; set allowPrivateNetwork: true on the webhook/),
        'contentPolicies[0].webhook.secret: must be a secret reference (env:NAME or file:PATH), never the secret itself',
        'contentPolicies[0].webhook.timeoutMs: must be an integer from 1 to 10000 (milliseconds)',
        'contentPolicies[0].webhook.directions: must be a non-empty list of input, output',
        expect.stringMatching(/^contentPolicies\[0\]\.webhook\.retries: unknown field/),
      ]));
      expect(problems.join('\n')).not.toMatch(/plain-secret/);
    });
  });

  test('allow: answered; the webhook saw the tokenized text (never the email), signed with the policy secret', async () => {
    const { data, response } = await ask('checked', 'Write to ada@example.com about the launch');
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBeTruthy();
    expect(gw.mock.requests()).toHaveLength(1);
    const input = hook.received.filter((r) => r.body.direction === 'input');
    expect(input).toHaveLength(1);
    const [asked] = input;
    expect(asked.path).toBe('/closed');
    expect(asked.body).toMatchObject({ type: 'content.check', tenantId: 'acme', policy: { id: 'hooked', version: 1 }, requestId: response.headers.get('x-request-id') });
    expect(asked.raw).not.toContain('ada@example.com');
    expect(asked.body.texts.join(' ')).toMatch(/Write to \[PII1_[A-Z0-9_]+\] about the launch/);
    const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(asked.headers['x-switchyard-signature']));
    expect(signature).not.toBeNull();
    expect(signature![2]).toBe(createHmac('sha256', SECRET).update(`${signature![1]}.${asked.raw}`).digest('hex'));
    const events = await recorded(response.headers.get('x-request-id')!);
    const admitted = events.find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
    expect(admitted.contentPolicy?.manifest?.findings.some((f) => f.type === 'webhook')).toBe(false);
  });

  test('block: 400 content_policy_violation naming the webhook and its reason, nothing sent, RequestRejected counts it', async () => {
    hook.verdict.input = 'block';
    const error = await refusal('checked', 'Tell me about the launch');
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_policy_violation');
    expect(error.message).toMatch(/content policy 'hooked' \(version 1\): it contains content of type 'webhook'\. The check said: mentions an embargoed launch/);
    expect(gw.mock.requests()).toHaveLength(0);
    const events = await recorded(requestIdOf(error));
    expect(events.map((e) => e.type)).toEqual(['RequestRejected']);
    const rejected = events[0].data as RequestRejected['data'];
    expect(rejected).toMatchObject({ status: 400, code: 'content_policy_violation' });
    expect(rejected.contentPolicy?.manifest?.findings).toEqual(expect.arrayContaining([{ type: 'webhook', direction: 'input', action: 'block', count: 1 }]));
  });

  test('a local block never calls the webhook', async () => {
    const error = await refusal('checked', 'Charge 4111 1111 1111 1111 please');
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/'card'/);
    expect(hook.received).toHaveLength(0);
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('a streamed request is checked on input too, before anything is sent', async () => {
    hook.verdict.input = 'block';
    const error = await openai.chat.completions.create({ model: 'checked', stream: true, messages: [{ role: 'user', content: 'launch plans?' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('content_policy_violation');
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('embeddings inputs are checked too, masked or tokenized values never sent', async () => {
    hook.verdict.input = 'block';
    const error = await openai.embeddings.create({ model: 'embed-checked', input: ['launch notes for ada@example.com'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('content_policy_violation');
    expect(gw.mock.requests()).toHaveLength(0);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0].raw).not.toContain('ada@example.com');
    expect(hook.received[0].body.texts).toEqual(['launch notes for [EMAIL]']);
  });

  describe('output: the buffered answer, as the output checks left it, before it is sent', () => {
    test('the webhook sees placeholders, never the values the client gets back', async () => {
      gw.mock.addScenario({ behaviour: { echo: true } });
      const { data } = await ask('checked', 'Please repeat: ada@example.com');
      expect(data.choices[0].message.content).toContain('ada@example.com');
      const output = hook.received.filter((r) => r.body.direction === 'output');
      expect(output).toHaveLength(1);
      expect(output[0].raw).not.toContain('ada@example.com');
      expect(output[0].body.texts.join(' ')).toMatch(/\[PII1_[A-Z0-9_]+\]/);
    });

    test('block: the provider answered and is billed, the client gets the refusal, RequestCompleted records it', async () => {
      hook.verdict.output = 'block';
      const error = await refusal('checked', 'Say something');
      expect(error.status).toBe(400);
      expect(error.message).toMatch(/The answer was blocked by content policy 'hooked' \(version 1\): the model produced content of type 'webhook'/);
      expect(gw.mock.requests()).toHaveLength(1);
      const events = await recorded(requestIdOf(error));
      expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
      const completed = events[2].data as RequestCompleted['data'];
      expect(completed).toMatchObject({ status: 'failed', errorCode: 'content_policy_violation' });
      expect(completed.contentPolicy?.findings).toEqual([{ type: 'webhook', direction: 'output', action: 'block', count: 1 }]);
    });
  });

  describe('no verdict in time: fail-closed refuses, fail-open lets through (counted)', () => {
    test('slow, fail-closed: 503 guardrail_unavailable, nothing sent, RequestRejected', async () => {
      hook.verdict.input = 'slow';
      const error = await refusal('checked', 'Hello there');
      expect(error.status).toBe(503);
      expect(error.code).toBe('guardrail_unavailable');
      expect(error.message).not.toMatch(/127\.0\.0\.1|closed/);
      expect(gw.mock.requests()).toHaveLength(0);
      const events = await recorded(requestIdOf(error));
      expect(events.map((e) => e.type)).toEqual(['RequestRejected']);
      expect(events[0].data).toMatchObject({ status: 503, code: 'guardrail_unavailable' });
    });

    test('slow, fail-open: answered, and the manifest counts the unchecked pass', async () => {
      hook.verdict.input = 'slow';
      const { response } = await ask('open', 'Hello there');
      expect(response.status).toBe(200);
      expect(hook.received.map((r) => r.path)).toEqual(['/open']);
      const events = await recorded(response.headers.get('x-request-id')!);
      const admitted = events.find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted.contentPolicy?.manifest?.findings).toEqual([{ type: 'webhook', direction: 'input', action: 'allow', count: 1 }]);
    });

    test('an error status, fail-closed: 503', async () => {
      hook.verdict.input = 'error';
      const error = await refusal('checked', 'Hello there');
      expect(error.status).toBe(503);
      expect(error.code).toBe('guardrail_unavailable');
    });

    test('down (connection refused), fail-closed: 503, nothing sent', async () => {
      const error = await refusal('down-closed', 'Hello there');
      expect(error.status).toBe(503);
      expect(error.code).toBe('guardrail_unavailable');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('counting tokens is checked like the request: fail-closed and down is a 503 in the Anthropic format', async () => {
      const counted = await postJson(gw, '/v1/messages/count_tokens', { model: 'down-closed', messages: [{ role: 'user', content: 'Hello there' }] });
      expect(counted.status).toBe(503);
      expect(counted.json).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.stringMatching(/webhook check of content policy 'down-closed'/) } });
    });

    test('down (connection refused), fail-open: answered', async () => {
      const { response } = await ask('down-open', 'Hello there');
      expect(response.status).toBe(200);
      expect(gw.mock.requests()).toHaveLength(1);
    });
  });

  // Reads what the tests above counted (a block and a timeout of 'hooked'): it runs last, in file order.
  test('latency and errors are in /metrics per policy, never a text', async () => {
    await ask('down-open', 'Hello there');
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/switchyard_guardrail_check_errors_total\{policy="down-open",check="webhook",reason="connection",resolution="fail_open"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_guardrail_check_errors_total\{policy="hooked",check="webhook",reason="timeout",resolution="fail_closed"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_guardrail_check_duration_seconds_count\{policy="hooked",check="webhook",outcome="block"\} [1-9]/);
    expect(metrics).not.toMatch(/Hello there/);
  });
});
