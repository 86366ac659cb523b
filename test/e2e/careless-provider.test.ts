import Anthropic from '@anthropic-ai/sdk';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import pg from 'pg';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { type TestGateway, postJson, sseData, startPostgresGateway } from '../support/gateway-harness.js';
import { requireService } from '../support/services.js';

/**
 * Issue 32, items 4–6, against a provider of the test's own that misbehaves in ways the mock would not
 * (an OpenAI-compatible server): answers of 60 MB, a count written as 1e400, tool arguments that are not
 * JSON; and `n` times the output cap against a tenant's TPM limit and budget. On PostgreSQL.
 */
const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'sy-admin-careless-provider-0123456789';
const MB = 1024 * 1024;
const HUGE_BYTES = 60 * MB;

/** What the careless provider did: bytes it wrote of each huge answer, and whether the gateway hung up first. */
const huge = { started: 0, written: [] as number[], cutOff: 0 };

/** Renders an OpenAI chat completion (buffered) or its chunks (streamed) for the scenario named by the model. */
function answer(req: IncomingMessage, res: ServerResponse, body: any): void {
  const model: string = body.model;
  const id = `chatcmpl-careless-${Date.now()}`;
  if (model === 'huge') return hugeAnswer(res);
  if (model === 'raw-1e400') {
    // Written by hand: JSON.stringify cannot write a number JSON.parse reads as Infinity.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"id":"${id}","object":"chat.completion","created":1,"model":"raw-1e400","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],"usage":{"prompt_tokens":1e400,"completion_tokens":3,"total_tokens":1e400}}`);
    return;
  }
  const args: string = model === 'args-cut' ? '{"city": "Par' : model === 'args-text' ? 'Paris, tomorrow' : '{"city":"Paris"}';
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id, object: 'chat.completion', created: 1, model,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }] }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
    }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
  for (let i = 0; i < args.length; i += 4) res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 4) } }] }));
  res.write(chunk({}, 'tool_calls'));
  res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } })}\n\n`);
  res.end('data: [DONE]\n\n');
  void req;
}

/** 60 MB of one valid completion, written as fast as the gateway reads it. */
function hugeAnswer(res: ServerResponse): void {
  huge.started++;
  const slot = huge.written.push(0) - 1;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(HUGE_BYTES) });
  const head = Buffer.from('{"id":"chatcmpl-huge","object":"chat.completion","created":1,"model":"huge","choices":[{"index":0,"message":{"role":"assistant","content":"');
  const tail = Buffer.from('"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}');
  const filler = Buffer.alloc(64 * 1024, 'a');
  let remaining = HUGE_BYTES - head.length - tail.length;
  res.on('close', () => {
    if (!res.writableFinished) huge.cutOff++;
  });
  const pump = () => {
    if (huge.written[slot] === 0) {
      huge.written[slot] += head.length;
      res.write(head);
    }
    while (remaining > 0) {
      const piece = remaining >= filler.length ? filler : filler.subarray(0, remaining);
      remaining -= piece.length;
      huge.written[slot] += piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    res.end(tail);
  };
  pump();
}

function carelessProvider(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => answer(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')));
    res.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

function yaml(providerUrl: string) {
  return (mockUrl: string, keyEnv: string) => {
    const deployment = (id: string, provider: string, model: string, capabilities = '[chat, streaming, tools]') =>
      `  - id: ${id}\n    provider: ${provider}\n    model: ${model}\n    capabilities: ${capabilities}\n    contextWindow: 64000\n    maxOutputTokens: 4096\n    price: { inputPer1M: "2.00", outputPer1M: "10.00" }`;
    const alias = (name: string, deploymentId: string) => `  - name: ${name}\n    routes:\n      - { deployment: ${deploymentId}, priority: 0 }`;
    return `
providers:
  - id: careless
    type: openai-compatible
    baseUrl: ${providerUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: mock
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
${deployment('huge', 'careless', 'huge')}
${deployment('raw-1e400', 'careless', 'raw-1e400')}
${deployment('args-cut', 'careless', 'args-cut')}
${deployment('args-text', 'careless', 'args-text')}
${deployment('args-ok', 'careless', 'args-ok')}
${deployment('many', 'mock', 'model-many', '[chat, streaming, n]')}
aliases:
${alias('huge', 'huge')}
${alias('raw-1e400', 'raw-1e400')}
${alias('args-cut', 'args-cut')}
${alias('args-text', 'args-text')}
${alias('args-ok', 'args-ok')}
${alias('many', 'many')}
tenants:
  - id: acme
  - id: metered
    limits: { tpm: 20000 }
  - id: thrifty
    budget: { monthlyUsd: "0.05" }
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
  - id: metered-app
    tenant: metered
    key: env:SY_TEST_METERED_KEY
  - id: thrifty-app
    tenant: thrifty
    key: env:SY_TEST_THRIFTY_KEY
`;
  };
}

const METERED_KEY = generateApiKey();
const THRIFTY_KEY = generateApiKey();
const WEATHER_TOOL = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

describeWithPostgres('a careless provider: answers too large to hold, counts JSON cannot say, tool arguments that are not JSON; n against limits', () => {
  let provider: { server: Server; url: string };
  let gw: TestGateway & { sql: pg.Client };
  let sql: pg.Client;

  beforeAll(async () => {
    process.env.SY_TEST_METERED_KEY = METERED_KEY;
    process.env.SY_TEST_THRIFTY_KEY = THRIFTY_KEY;
    provider = await carelessProvider();
    gw = await startPostgresGateway(baseUrl!, { yaml: yaml(provider.url), environment: { adminToken: ADMIN_TOKEN } });
    sql = gw.sql;
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    provider?.server.closeAllConnections();
    await new Promise((resolve) => provider?.server.close(resolve));
  });

  test('three 60 MB answers at once: each refused (502 upstream_error, answer_too_large), the connection let go early, memory bounded, billed at the reservation', async () => {
    const rss = { base: process.memoryUsage().rss, peak: 0 };
    const sampler = setInterval(() => (rss.peak = Math.max(rss.peak, process.memoryUsage().rss)), 5);
    const responses = await Promise.all([1, 2, 3].map(() => postJson(gw, '/v1/chat/completions', { model: 'huge', messages: [{ role: 'user', content: 'Write a lot.' }] })));
    clearInterval(sampler);
    for (const response of responses) {
      expect(response.status).toBe(502);
      expect(response.json.error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('answer_too_large') });
      expect(response.json.error.candidates_tried ?? response.json.error.detail?.candidates_tried ?? null).toEqual(expect.anything());
    }
    expect(huge.started).toBe(3);
    // The gateway stopped reading a few MiB in: the provider could not write its 60 MB.
    for (const written of huge.written) expect(written).toBeLessThan(HUGE_BYTES);
    // Three answers held whole were 180 MB of buffers (and more as strings): the gateway held a few MiB each.
    expect((rss.peak - rss.base) / MB).toBeLessThan(100);

    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    const rows = (await sql.query(`SELECT outcome, usage_evidence, input_tokens::int, output_tokens::int FROM cost_ledger WHERE request_id = ANY($1)`, [ids])).rows;
    // Each attempt is billed (the provider produced the answer) at the reservation: the estimate and the 1,024 default output.
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ outcome: 'failed', usage_evidence: 'estimated', output_tokens: 1024 });
    const metrics = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
    expect(metrics).toMatch(/switchyard_attempt_errors_total\{deployment="huge",error_class="answer_too_large"\} 3/);
  });

  test('a count written as 1e400 (Infinity once parsed) is not believed: 200, the estimate billed, evidence implausible', async () => {
    const response = await postJson(gw, '/v1/chat/completions', { model: 'raw-1e400', messages: [{ role: 'user', content: 'Hi' }] });
    expect(response.status).toBe(200);
    expect(Number.isSafeInteger(response.json.usage.prompt_tokens)).toBe(true);
    expect(response.json.usage.completion_tokens).toBe(3);
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    const [row] = (await sql.query(`SELECT usage_evidence, input_tokens::int FROM cost_ledger WHERE request_id = $1`, [response.headers.get('x-request-id')])).rows;
    expect(row).toEqual({ usage_evidence: 'implausible', input_tokens: response.json.usage.prompt_tokens });
  });

  describe('tool arguments that are not a JSON object, into each client format', () => {
    const CASES = [
      ['args-cut', '{"city": "Par'],
      ['args-text', 'Paris, tomorrow'],
    ] as const;

    test.each(CASES)('%s: an OpenAI client gets the text as the model produced it (its format carries arguments as a string), buffered and streamed', async (alias, text) => {
      const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const buffered = await client.chat.completions.create({ model: alias, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL] });
      expect(buffered.choices[0].message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_weather', arguments: text } });
      const stream = await client.chat.completions.create({ model: alias, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL], stream: true });
      let streamed = '';
      for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) streamed += call.function?.arguments ?? '';
      expect(streamed).toBe(text);
    });

    test.each(CASES)('%s: an Anthropic client gets input as an object, {"_raw": text}, buffered and streamed (the SDK parses the streamed deltas)', async (alias, text) => {
      const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
      const request = { model: alias, max_tokens: 200, messages: [{ role: 'user' as const, content: 'Weather?' }], tools: [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }] };
      const buffered = await client.messages.create(request);
      expect(buffered.stop_reason).toBe('tool_use');
      expect(buffered.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { _raw: text } })]);
      const streamed = await client.messages.stream(request).finalMessage();
      expect(streamed.stop_reason).toBe('tool_use');
      expect(streamed.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { _raw: text } })]);
    });

    test('a JSON object reaches an Anthropic client as itself; raw SSE: every input_json_delta of a block concatenates to an object', async () => {
      const response = await postJson(gw, '/v1/messages', {
        model: 'args-cut', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Weather?' }],
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      }, { 'anthropic-version': '2023-06-01' });
      const deltas = sseData(response.text).map((d) => JSON.parse(d)).filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta');
      expect(JSON.parse(deltas.map((e) => e.delta.partial_json).join(''))).toEqual({ _raw: '{"city": "Par' });
      const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
      const good = await client.messages.create({ model: 'args-ok', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }], tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] });
      expect(good.content).toEqual([expect.objectContaining({ type: 'tool_use', input: { city: 'Paris' } })]);
    });

    test.each(CASES)('%s: a Responses client gets the arguments string as produced', async (alias, text) => {
      const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const response = await client.responses.create({ model: alias, input: 'Weather?', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }] });
      expect(response.output.find((item) => item.type === 'function_call')).toMatchObject({ name: 'get_weather', arguments: text });
    });
  });

  describe('n multiplies the reservation: the TPM limit and the budget see every choice', () => {
    const ask = (key: string, n: number, maxTokens: number) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'many', n, max_tokens: maxTokens, messages: [{ role: 'user', content: 'Hello' }] }),
      }).then(async (r) => ({ status: r.status, id: r.headers.get('x-request-id')!, json: (await r.json()) as any }));

    test('tpm 20,000: n=8 × 4,000 (32,000 reserved) is refused 429 before any provider call; n=2 × 4,000 passes and RequestAdmitted records 8,000', async () => {
      const before = gw.mock.requests().length;
      const refused = await ask(METERED_KEY, 8, 4000);
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ code: 'rate_limited' });
      expect(gw.mock.requests().length).toBe(before);
      const passed = await ask(METERED_KEY, 2, 4000);
      expect(passed.status).toBe(200);
      const admitted = (await gw.requestEvents(passed.id)).find((e) => e.type === 'RequestAdmitted')!;
      expect(admitted.data).toMatchObject({ reservedOutputTokens: 8000 });
      // What the provider was asked for: n as the client sent it.
      expect(gw.mock.requests().at(-1)!.body as object).toMatchObject({ n: 2 });
    });

    test('a $0.05 budget at $10 per million output tokens: n=8 × 1,000 ($0.08 reserved) is refused 402; n=2 × 1,000 ($0.02) passes', async () => {
      const refused = await ask(THRIFTY_KEY, 8, 1000);
      expect(refused.status).toBe(402);
      expect(refused.json.error).toMatchObject({ code: 'budget_exceeded' });
      const passed = await ask(THRIFTY_KEY, 2, 1000);
      expect(passed.status).toBe(200);
    });

    test('a max_tokens of a billion is the route\'s 4,096: reserved and sent capped, so neither the budget nor the limit refuses a cost no route could reach', async () => {
      for (const key of [THRIFTY_KEY, METERED_KEY]) {
        const asked = await ask(key, 1, 1_000_000_000);
        expect(asked.status).toBe(200);
        const admitted = (await gw.requestEvents(asked.id)).find((e) => e.type === 'RequestAdmitted')!;
        expect(admitted.data).toMatchObject({ reservedOutputTokens: 4096 });
        const sent = gw.mock.requests().at(-1)!.body as { max_tokens?: number; max_completion_tokens?: number };
        expect(sent.max_completion_tokens ?? sent.max_tokens).toBe(4096);
      }
      // n choices: each reserved the route's most.
      const two = await ask(METERED_KEY, 2, 1_000_000_000);
      expect(two.status).toBe(200);
      expect((await gw.requestEvents(two.id)).find((e) => e.type === 'RequestAdmitted')!.data).toMatchObject({ reservedOutputTokens: 8192 });
    });
  });
});
