import { createHash } from 'node:crypto';
import { Pool } from 'undici';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';
import { BedrockAdapter } from '../../modules/providers/bedrock/bedrock-adapter.js';
import { mockEmbedding } from '../../modules/providers/mock/mock-embeddings.js';
import { MockProviderHost } from '../../modules/providers/mock/mock-provider-host.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { UpstreamPools } from '../../modules/providers/upstream-pools.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { FixtureServer, chatRequest, collect, fixtureBytes, fixtureJson, randomChunks, resolvedDeployment, seededRandom } from '../support/provider-fixtures.js';
import { withBelievedUsage } from '../support/believed-usage.js';

const golden = fixtureJson('bedrock', 'converse-tool-use.json');
const toolStream = fixtureJson('bedrock', 'converse-stream-tool-use.events.json');
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

function bedrock(secret: string | null = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', model = MODEL): ResolvedDeployment {
  const base = resolvedDeployment('bedrock', { secret, model });
  return { ...base, provider: { ...base.provider, region: 'us-west-2' } };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('expected a ProviderError');
}

describe('BedrockAdapter over HTTP', () => {
  let server: FixtureServer;
  const adapter = new BedrockAdapter();

  beforeEach(async () => {
    server = await new FixtureServer().start();
  });
  afterEach(async () => {
    await server.close();
  });

  test('Converse: signed POST to /model/{encoded id}/converse with the mapped body; the answer maps back', async () => {
    server.reply({
      headers: { 'content-type': 'application/json', 'x-amzn-requestid': golden.expectedResponse.providerRequestId },
      chunks: [Buffer.from(JSON.stringify(golden.converseResponse))],
    });
    const response = await adapter.chat(server.call(parseOpenAiChatRequest(golden.openaiRequest), bedrock()));
    expect(withBelievedUsage(response)).toEqual(golden.expectedResponse);
    const seen = server.seen[0];
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    // the documentation's request, plus Claude naming the matched stop sequence (it has stop sequences)
    expect(seen.body).toEqual({ ...golden.converseRequest, additionalModelResponseFieldPaths: ['/stop_sequence'] });
    expect(seen.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/);
    expect(seen.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(JSON.stringify(seen.body)).digest('hex'));
    expect(seen.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
  });

  test('a base URL with a path prefix keeps it', async () => {
    server.reply({ chunks: [Buffer.from(JSON.stringify(golden.followUpResponse))] });
    await adapter.chat(server.call(chatRequest(), bedrock(), '/bedrock/'));
    expect(server.seen[0].url).toBe('/bedrock/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
  });

  test('ConverseStream: the binary fixture arrives in random pieces and yields the documented events (10 seeds)', async () => {
    const bytes = fixtureBytes('bedrock', 'converse-stream-tool-use.bin');
    for (let seed = 1; seed <= 10; seed++) {
      const pieces = randomChunks(bytes, seededRandom(seed), 12).map((chunk) => Buffer.from(chunk));
      server.reply({ headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': `req-${seed}` }, chunks: pieces });
      const upstream = await adapter.chatStream(server.call(chatRequest({ stream: true }), bedrock()));
      expect(upstream.providerRequestId).toBe(`req-${seed}`);
      expect(withBelievedUsage(await collect(upstream.events))).toEqual(toolStream.expectedEvents);
    }
    expect(server.seen.every((seen) => seen.url.endsWith('/converse-stream') && seen.headers.accept === 'application/vnd.amazon.eventstream')).toBe(true);
  });

  test('an exception frame inside the 200 stream fails the stream with its class after the text before it', async () => {
    server.reply({ headers: { 'content-type': 'application/vnd.amazon.eventstream' }, chunks: [fixtureBytes('bedrock', 'converse-stream-throttled.bin')] });
    const upstream = await adapter.chatStream(server.call(chatRequest({ stream: true }), bedrock()));
    const seen: unknown[] = [];
    const error = await failure((async () => {
      for await (const event of upstream.events) seen.push(event);
    })());
    expect(seen).toEqual([{ type: 'text', choice: 0, text: 'The most popular' }]);
    expect(error.errorClass).toBe('rate_limited');
  });

  test('a stream cut inside a frame is a malformed response, not a clean end', async () => {
    const bytes = fixtureBytes('bedrock', 'converse-stream-tool-use.bin');
    server.reply({ headers: { 'content-type': 'application/vnd.amazon.eventstream' }, chunks: [bytes.subarray(0, 700)] });
    const upstream = await adapter.chatStream(server.call(chatRequest({ stream: true }), bedrock()));
    expect((await failure(collect(upstream.events))).errorClass).toBe('malformed_response');
  });

  test('HTTP errors are classified from x-amzn-errortype, for buffered and streamed calls alike', async () => {
    const cases: Array<[number, string, string, string]> = [
      [429, 'ThrottlingException', 'Too many requests, please wait before trying again.', 'rate_limited'],
      [400, 'ValidationException', 'Input is too long for requested model.', 'context_length'],
      [403, 'UnrecognizedClientException', 'The security token included in the request is invalid.', 'auth'],
      [503, 'ServiceUnavailableException', 'Service unavailable', 'overloaded'],
    ];
    for (const [status, type, message, errorClass] of cases) {
      for (const stream of [false, true]) {
        server.reply({
          status,
          headers: { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
          chunks: [Buffer.from(JSON.stringify({ message }))],
        });
        const call = server.call(chatRequest({ stream }), bedrock());
        const error = await failure(stream ? adapter.chatStream(call) : adapter.chat(call));
        expect({ status: error.httpStatus, errorClass: error.errorClass }).toEqual({ status, errorClass });
      }
    }
  });

  test('without credentials the call fails as auth before anything is sent', async () => {
    const error = await failure(adapter.chat(server.call(chatRequest(), bedrock(null))));
    expect(error.errorClass).toBe('auth');
    expect(server.seen).toHaveLength(0);
  });
});

describe('BedrockAdapter Titan embeddings against the mock provider', () => {
  let mock: MockProviderServer;
  let pool: Pool;
  let url: string;
  const adapter = new BedrockAdapter();

  beforeAll(async () => {
    mock = new MockProviderServer();
    url = await mock.listen(0);
    pool = new Pool(url, { connections: 4 });
  });
  afterAll(async () => {
    await pool.destroy();
    await mock.close();
  });
  beforeEach(() => {
    mock.clearRequests();
    mock.clearScenarios();
  });

  const embedCall = (inputs: string[], dimensions: number | null, deployment = bedrock(undefined, 'amazon.titan-embed-text-v2:0')) => ({
    request: { model: 'embed', inputs, dimensions, user: null },
    deployment,
    dispatcher: pool,
    baseUrl: new URL(url),
    signal: new AbortController().signal,
    headersTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    maxAnswerBytes: 16 * 1024 * 1024,
  });

  test('one signed InvokeModel per input, vectors back in input order, token counts summed', async () => {
    const inputs = ['first text', 'second, longer text here', 'third', 'fourth one', 'fifth and final input'];
    const response = await adapter.embed(embedCall(inputs, 256));
    expect(response.vectors).toEqual(inputs.map((text) => mockEmbedding(text, 256)));
    const seen = mock.requests();
    expect(seen).toHaveLength(inputs.length);
    expect(seen.every((r) => r.path === '/model/amazon.titan-embed-text-v2%3A0/invoke' && r.headers.authorization?.startsWith('AWS4'))).toBe(true);
    expect(seen.map((r) => (r.body as { inputText: string }).inputText).sort()).toEqual([...inputs].sort());
    expect(seen.every((r) => (r.body as { dimensions: number }).dimensions === 256)).toBe(true);
    // the mock counts ceil(length / 4) tokens per text
    expect(response.inputTokens!.reduce((sum, field) => sum + (field.value as number), 0)).toBe(inputs.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0));
  });

  test('an upstream failure on one input fails the whole call with its class', async () => {
    mock.addScenario({ times: 1, behaviour: { status: 429 } });
    const error = await failure(adapter.embed(embedCall(['a', 'b', 'c'], null)));
    expect(error.errorClass).toBe('rate_limited');
    expect(error.httpStatus).toBe(429);
  });

  test('a call whose request was already cancelled fails as cancelled and reaches no upstream, never an answer with holes', async () => {
    const call = embedCall(['a', 'b', 'c'], null);
    const request = new AbortController();
    request.abort(new Error('the client went away'));
    const error = await failure(adapter.embed({ ...call, signal: request.signal }));
    expect(error.errorClass).toBe('cancelled');
    expect(mock.requests()).toHaveLength(0);
  });

  test('the mock refuses a request without a SigV4 authorization header, as Bedrock does', async () => {
    const response = await fetch(`${url}/model/amazon.titan-embed-text-v2%3A0/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputText: 'x' }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-errortype')).toMatch(/^AccessDeniedException:/);
    expect(await response.json()).toEqual({ message: 'Missing Authentication Token' });
  });
});

describe('Bedrock base URL', () => {
  test('without a baseUrl the pool reaches the regional Bedrock Runtime endpoint of the provider', async () => {
    const pools = new UpstreamPools(new MockProviderHost(), { connectTimeoutMs: 1000, connections: 1 });
    try {
      const deployment = bedrock();
      const target = await pools.target({ ...deployment, provider: { ...deployment.provider, region: 'eu-west-3' } });
      expect(target.baseUrl.href).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com/');
      await expect(pools.target({ ...deployment, id: 'other', provider: { ...deployment.provider, region: 'evil.example.com/x' } })).rejects.toThrow(
        /not an AWS region name/,
      );
    } finally {
      await pools.close();
    }
  });
});
