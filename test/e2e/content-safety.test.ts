import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RequestAdmitted, RequestCompleted, RequestRejected } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { mockProviderYaml } from '../support/anthropic-yaml.js';
import { AdminClient } from '../support/admin-client.js';

/**
 * Content policies on the request path (issue 36): input checks before dispatch (block, mask, tokenize, log) in
 * every client format, placeholders recovered exactly in buffered and streamed answers (text and tool arguments),
 * output checks (mask, block) on answers, and evidence without content on the request's events. The mock provider
 * records what it received and, with `echo`, answers with the prompt's own text (a model that copies placeholders).
 */
function contentSafetyYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-anthropic', 'anthropic', mockUrl)}${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}deployments:
  - id: claude-primary
    provider: mock-anthropic
    model: claude-upstream
    capabilities: [chat, streaming, tools]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: gpt-primary
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming, tools]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
contentPolicies:
  - id: pii-strict
    input:  { email: tokenize, phone: tokenize, card: block, iban: mask, national_id: mask, secret: block,
              ip_address: log, custom: [{ name: project-code, pattern: "PRJ-[0-9]{6}", action: mask }],
              deny_terms: { terms: ["project nightingale"], action: block },
              prompt_injection: log }
    output: { email: mask, secret: mask }
  - id: answers-checked
    output: { secret: block, email: mask }
aliases:
  - name: claude
    routes:
      - { deployment: claude-primary, priority: 0 }
  - name: gpt
    routes:
      - { deployment: gpt-primary, priority: 0 }
  - name: gpt-checked
    contentPolicy: answers-checked
    routes:
      - { deployment: gpt-primary, priority: 0 }
tenants:
  - id: acme
    contentPolicy: pii-strict
  - id: plain
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
  - id: plain-app
    tenant: plain
    key: env:SY_TEST_PLAIN_KEY
    scopes: [inference, models:read]
`;
}

const PLAIN_KEY = 'sk-sy-plainplainplainplainplainplain01';
const ADMIN_TOKEN = 'sy-admin-content-safety-test-token-0123456789';
const PLACEHOLDER = /\[PII1_[A-Z0-9_]+\]/;

describe('content safety on the request path', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let plain: OpenAI;

  beforeAll(async () => {
    process.env.SY_TEST_PLAIN_KEY = PLAIN_KEY;
    gw = await startTestGateway({ yaml: contentSafetyYaml, environment: { adminToken: ADMIN_TOKEN } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    plain = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: PLAIN_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  const upstreamText = () => JSON.stringify(gw.mock.requests().map((request) => request.body));

  describe('block: a 400 in the client format, nothing sent, nothing billed, RequestRejected says why without the value', () => {
    test('OpenAI SDK: a card number', async () => {
      const error = await openai.chat.completions
        .create({ model: 'gpt', messages: [{ role: 'user', content: 'Charge 4111 1111 1111 1111 please' }] })
        .withResponse()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const apiError = error as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.code).toBe('content_policy_violation');
      expect(apiError.message).toMatch(/content policy 'pii-strict' \(version 1\)/);
      expect(apiError.message).toMatch(/'card'/);
      expect(apiError.message).not.toMatch(/4111/);
      expect(gw.mock.requests()).toHaveLength(0);
      const requestId = apiError.headers?.get('x-request-id') as string;
      // A refusal's event is committed with the next group commit, which may come just after the answer.
      let events = await gw.requestEvents(requestId);
      for (let i = 0; i < 50 && events.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        events = await gw.requestEvents(requestId);
      }
      expect(events.map((e) => e.type)).toEqual(['RequestRejected']);
      const rejected = events[0].data as RequestRejected['data'];
      expect(rejected).toMatchObject({ status: 400, code: 'content_policy_violation', tenantId: 'acme' });
      expect(rejected.contentPolicy?.sources).toEqual([{ policyId: 'pii-strict', version: 1, attachedTo: 'tenant' }]);
      expect(rejected.contentPolicy?.manifest?.findings).toEqual(expect.arrayContaining([{ type: 'card', direction: 'input', action: 'block', count: 1 }]));
      expect(JSON.stringify(events, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))).not.toMatch(/4111/);
    });

    test('Anthropic SDK: a deny-listed term, in any case, inside a system block', async () => {
      const error = await anthropic.messages
        .create({ model: 'claude', max_tokens: 50, system: [{ type: 'text', text: 'Context: Project NIGHTINGALE launches soon.' }], messages: [{ role: 'user', content: 'Summarise' }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      const body = (error as InstanceType<typeof Anthropic.APIError>).error as { type: string; error: { type: string; message: string } };
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('invalid_request_error');
      expect(body.error.message).toMatch(/'deny_terms'/);
      expect(body.error.message).not.toMatch(/nightingale/i);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('Responses API: a provider key in a tool result', async () => {
      const error = await openai.responses
        .create({
          model: 'gpt',
          input: [
            { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"config"}' },
            { type: 'function_call_output', call_id: 'call_1', output: 'OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD' },
            { role: 'user', content: 'What did the tool say?' },
          ],
          tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }],
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/'secret'/);
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  describe('mask: irreversible typed markers reach the provider', () => {
    test('IBAN, national id and a custom pattern are masked; routing fields and tool names are untouched', async () => {
      await openai.chat.completions.create({
        model: 'gpt',
        messages: [{ role: 'user', content: 'Pay GB82 WEST 1234 5698 7654 32 for PRJ-123456, SSN 123-45-6789.' }],
        tools: [{ type: 'function', function: { name: 'pay_iban', parameters: { type: 'object', properties: { amount: { type: 'number' } } } } }],
        tool_choice: 'none',
      });
      const [received] = gw.mock.requests();
      const body = received.body as { model: string; messages: Array<{ content: string }>; tools: Array<{ function: { name: string } }> };
      expect(body.model).toBe('gpt-upstream');
      expect(body.tools[0].function.name).toBe('pay_iban');
      expect(body.messages.at(-1)!.content).toBe('Pay [IBAN] for [CUSTOM:project-code], SSN [NATIONAL_ID].');
    });
  });

  describe('tokenize: placeholders upstream, exact values back to the client', () => {
    const email = 'ada.lovelace@example.com';
    const phone = '+44 20 7946 0958';

    test('OpenAI SDK, buffered: the provider sees placeholders only; the answer comes back with the values', async () => {
      gw.mock.addScenario({ behaviour: { echo: true, chunks: 3 } });
      const { data, response } = await openai.chat.completions
        .create({ model: 'gpt', messages: [{ role: 'user', content: `Write to ${email} or call ${phone}.` }] })
        .withResponse();
      const sent = upstreamText();
      expect(sent).not.toContain(email);
      expect(sent).not.toContain('7946');
      expect(sent).toMatch(PLACEHOLDER);
      expect(data.choices[0].message.content).toBe(`Write to ${email} or call ${phone}.`);
      const events = await gw.requestEvents(response.headers.get('x-request-id')!);
      const admitted = events.find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted.contentPolicy?.sources).toEqual([{ policyId: 'pii-strict', version: 1, attachedTo: 'tenant' }]);
      expect(admitted.contentPolicy?.manifest?.findings).toEqual(expect.arrayContaining([
        { type: 'email', direction: 'input', action: 'tokenize', count: 1 },
        { type: 'phone', direction: 'input', action: 'tokenize', count: 1 },
      ]));
      expect(admitted.contentPolicy?.manifest?.placeholders).toEqual({ created: 2 });
      const completed = events.find((e) => e.type === 'RequestCompleted')!.data as RequestCompleted['data'];
      expect(completed.contentPolicy?.placeholders).toEqual({ resolved: 2, unresolved: 0 });
      expect(JSON.stringify(events, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))).not.toContain(email);
      expect(JSON.stringify(events, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))).not.toMatch(PLACEHOLDER);
    });

    test('OpenAI SDK, streamed one character per event: the placeholders split across events are still recovered', async () => {
      const prompt = `Reply to ${email} today.`;
      gw.mock.addScenario({ behaviour: { echo: true, chunks: 400 } });
      const stream = await openai.chat.completions.create({ model: 'gpt', stream: true, messages: [{ role: 'user', content: prompt }] });
      let text = '';
      let finish = '';
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(text).toBe(prompt);
      expect(finish).toBe('stop');
      expect(upstreamText()).not.toContain(email);
    });

    test('Anthropic SDK, streamed: recovered in the text deltas', async () => {
      const prompt = `Contact ${email}.`;
      gw.mock.addScenario({ behaviour: { echo: true, chunks: 25 } });
      const stream = anthropic.messages.stream({ model: 'claude', max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
      const message = await stream.finalMessage();
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: prompt })]);
      expect(upstreamText()).not.toContain(email);
    });

    test('tool-call arguments: tokenized in the history sent, recovered (JSON-escaped) in the call the model makes, buffered and streamed', async () => {
      const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'send_mail', parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] } } }];
      gw.mock.addScenario({ behaviour: { echo: true, chunks: 40 } });
      const buffered = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: email }], tools, tool_choice: 'required' });
      expect(JSON.parse((buffered.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments)).toEqual({ to: email });
      expect(upstreamText()).not.toContain(email);
      gw.mock.clearRequests();
      const stream = await openai.chat.completions.create({ model: 'gpt', stream: true, messages: [{ role: 'user', content: email }], tools, tool_choice: 'required' });
      let args = '';
      for await (const chunk of stream) args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      expect(JSON.parse(args)).toEqual({ to: email });
      expect(upstreamText()).not.toContain(email);
    });

    test('a forged placeholder in an answer is never recovered: it stays as it is (leave-masked)', async () => {
      const forged = '[PII1_EM_AAAAAAAAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBB]';
      gw.mock.addScenario({ behaviour: { text: `Your address is ${forged}.` } });
      const completion = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: `I am ${email}` }] });
      expect(completion.choices[0].message.content).toBe(`Your address is ${forged}.`);
    });
  });

  describe('output checks', () => {
    test('buffered: a secret the model writes blocks the answer (400, billed), an email is masked', async () => {
      gw.mock.addScenario({ behaviour: { text: 'Use key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD now' } });
      const error = await plain.chat.completions.create({ model: 'gpt-checked', messages: [{ role: 'user', content: 'hi' }] }).withResponse().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const apiError = error as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.message).toMatch(/answer was blocked by content policy 'answers-checked'/);
      expect(apiError.message).not.toMatch(/sk-proj/);
      const events = await gw.requestEvents(apiError.headers?.get('x-request-id') as string);
      expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
      const completed = events.at(-1)!.data as RequestCompleted['data'];
      expect(completed).toMatchObject({ status: 'failed', httpStatus: 400, errorCode: 'content_policy_violation' });
      expect(Number(completed.totals.costUsd)).toBeGreaterThan(0);

      gw.mock.clearScenarios();
      gw.mock.addScenario({ behaviour: { text: 'Write to grace@example.org.' } });
      const masked = await plain.chat.completions.create({ model: 'gpt-checked', messages: [{ role: 'user', content: 'hi' }] });
      expect(masked.choices[0].message.content).toBe('Write to [EMAIL].');
    });

    test('streamed: the bytes before the secret go out, then an error event; never [DONE]', async () => {
      gw.mock.addScenario({ behaviour: { text: `${'All fine here. '.repeat(30)}Now the key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD`, chunks: 60 } });
      const stream = await plain.chat.completions.create({ model: 'gpt-checked', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      let text = '';
      const error = await (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).toMatch(/answer was blocked/);
      expect(text.startsWith('All fine here.')).toBe(true);
      expect(text).not.toContain('sk-proj');
    });
  });

  test('a policy changed while a request streams: that request keeps the version it was admitted with; the next one gets the new one', async () => {
    const admin = new AdminClient(gw.url, ADMIN_TOKEN);
    gw.mock.addScenario({ times: 1, behaviour: { text: `${'Slow words. '.repeat(20)}Mail grace@example.org`, chunks: 20, chunkGapMs: 40 } });
    const { data: stream, response } = await plain.chat.completions.create({ model: 'gpt-checked', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const iterator = stream[Symbol.asyncIterator]();
    let text = (await iterator.next()).value?.choices[0]?.delta.content ?? '';
    const changed = await admin.put('/content-policies/answers-checked', { output: { secret: 'block' } });
    expect(changed.status).toBeLessThan(300);
    // The next request sees version 2 within a second (the snapshot on this node).
    let version = 0;
    for (let i = 0; i < 40 && version !== 2; i++) {
      gw.mock.clearScenarios();
      gw.mock.addScenario({ times: 1, behaviour: { text: 'Mail grace@example.org' } });
      const { data, response: next } = await plain.chat.completions.create({ model: 'gpt-checked', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      const admitted = (await gw.requestEvents(next.headers.get('x-request-id')!)).find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      version = admitted.contentPolicy!.sources[0].version;
      if (version === 2) expect(data.choices[0].message.content).toBe('Mail grace@example.org');
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(version).toBe(2);
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) text += next.value.choices[0]?.delta.content ?? '';
    expect(text.endsWith('Mail [EMAIL]')).toBe(true);
    const admitted = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
    expect(admitted.contentPolicy!.sources).toEqual([{ policyId: 'answers-checked', version: 1, attachedTo: 'alias' }]);
    // Back as the file declares it, for the tests that follow.
    expect((await admin.put('/content-policies/answers-checked', { output: { secret: 'block', email: 'mask' } })).status).toBeLessThan(300);
  });

  test('a key without a policy: content is sent and answered as it is, and the events carry no manifest', async () => {
    gw.mock.addScenario({ behaviour: { echo: true } });
    const { data, response } = await plain.chat.completions
      .create({ model: 'gpt', messages: [{ role: 'user', content: 'Mail ada@example.com' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('Mail ada@example.com');
    expect(upstreamText()).toContain('ada@example.com');
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    expect((events.find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data']).contentPolicy).toBeUndefined();
    expect((events.find((e) => e.type === 'RequestCompleted')!.data as RequestCompleted['data']).contentPolicy).toBeUndefined();
  });

  test('findings are counted in /metrics by policy, type, action and direction', async () => {
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/switchyard_guardrail_findings_total\{policy="pii-strict",type="card",action="block",direction="input"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_guardrail_findings_total\{policy="pii-strict",type="email",action="tokenize",direction="input"\} [1-9]/);
    expect(metrics).not.toMatch(/4111|ada\.lovelace/);
  });
});
