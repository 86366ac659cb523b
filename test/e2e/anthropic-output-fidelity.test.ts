import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { anthropicYaml } from '../support/anthropic-yaml.js';
import { BEDROCK_CREDENTIALS, BEDROCK_CREDENTIALS_ENV, conformanceYaml } from '../support/conformance.js';

const weather = { name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const time = { name: 'get_time', description: 'Time in a zone', input_schema: { type: 'object' as const, properties: { tz: { type: 'string' }, hours: { type: 'integer' } }, required: ['tz'] } };
const ask = { max_tokens: 300, messages: [{ role: 'user' as const, content: 'Hello there' }] };

interface Frame { event: string; data: Record<string, unknown>; at: number }

/** Reads an SSE response frame by frame, noting when each arrived (ms after the request was sent). */
async function readFrames(response: Response, sentAt: number): Promise<Frame[]> {
  const frames: Frame[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
      frames.push({ event, data, at: performance.now() - sentAt });
    }
  }
  return frames;
}

/**
 * Anthropic's documented stream order: message_start; then per content block, in index order from 0,
 * content_block_start, its deltas, content_block_stop (one block open at a time, never a delta for a
 * block that is not open); then one message_delta and message_stop last. `ping` may come anywhere
 * after message_start. Returns the first violation, or null.
 */
function anthropicOrderViolation(frames: Frame[]): string | null {
  let open: number | null = null;
  let nextIndex = 0;
  let phase: 'start' | 'content' | 'delta' | 'stopped' = 'start';
  for (const [i, { event, data }] of frames.entries()) {
    if (data.type !== event) return `frame ${i}: event ${event} carries type ${String(data.type)}`;
    if (phase === 'start') {
      if (event !== 'message_start') return `frame ${i}: ${event} before message_start`;
      phase = 'content';
      continue;
    }
    if (event === 'ping') continue;
    if (phase === 'stopped') return `frame ${i}: ${event} after message_stop`;
    switch (event) {
      case 'content_block_start':
        if (phase !== 'content') return `frame ${i}: content_block_start after message_delta`;
        if (open !== null) return `frame ${i}: block ${String(data.index)} started while block ${open} is open`;
        if (data.index !== nextIndex) return `frame ${i}: block ${String(data.index)} started, expected ${nextIndex}`;
        open = nextIndex++;
        break;
      case 'content_block_delta':
        if (data.index !== open) return `frame ${i}: delta for block ${String(data.index)}, open is ${String(open)}`;
        break;
      case 'content_block_stop':
        if (data.index !== open) return `frame ${i}: stop for block ${String(data.index)}, open is ${String(open)}`;
        open = null;
        break;
      case 'message_delta':
        if (phase !== 'content') return `frame ${i}: a second message_delta`;
        if (open !== null) return `frame ${i}: message_delta while block ${open} is open`;
        phase = 'delta';
        break;
      case 'message_stop':
        if (phase !== 'delta') return `frame ${i}: message_stop without message_delta`;
        phase = 'stopped';
        break;
      default:
        return `frame ${i}: unexpected event ${event}`;
    }
  }
  return phase === 'stopped' ? null : `the stream ended in phase ${phase}`;
}

/**
 * Issue 35 items 3 and 4: what an Anthropic-format client receives is what Anthropic itself would send —
 * the stop sequence that matched, and a valid event sequence when an OpenAI upstream interleaves the
 * argument pieces of parallel tool calls.
 */
describe('Anthropic-format output fidelity', () => {
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;
  const streamRaw = async (body: Record<string, unknown>) => {
    const sentAt = performance.now();
    const response = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(response.status).toBe(200);
    return readFrames(response, sentAt);
  };

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: anthropicYaml });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('which stop sequence matched (item 3)', () => {
    test('a stop sequence that never occurs: end_turn and stop_sequence null, buffered and streamed', async () => {
      const buffered = await anthropic.messages.create({ ...ask, model: 'claude', stop_sequences: ['never-said'] });
      expect(buffered).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
      const frames = await streamRaw({ ...ask, model: 'claude', stop_sequences: ['never-said'] });
      expect(frames.find((f) => f.event === 'message_delta')!.data.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
      expect(gw.mock.requests().map((r) => (r.body as { stop_sequences?: unknown }).stop_sequences)).toEqual([['never-said'], ['never-said']]);
    });

    test('Anthropic SDK → Anthropic upstream, buffered: stop_reason stop_sequence with the sequence that matched', async () => {
      const message = await anthropic.messages.create({ ...ask, model: 'claude', stop_sequences: ['never-said', 'mock'] });
      expect(message.stop_reason).toBe('stop_sequence');
      expect(message.stop_sequence).toBe('mock');
      expect(message.content).toEqual([{ type: 'text', text: 'Switchyard routes this ' }]);
      expect(gw.mock.requests()[0].body).toMatchObject({ stop_sequences: ['never-said', 'mock'] });
    });

    test('Anthropic SDK → Anthropic upstream, streamed: message_delta carries it, and the SDK final message has it', async () => {
      const frames = await streamRaw({ ...ask, model: 'claude', stop_sequences: ['mock'] });
      expect(anthropicOrderViolation(frames)).toBeNull();
      expect(frames.find((f) => f.event === 'message_start')!.data.message).toMatchObject({ stop_reason: null, stop_sequence: null });
      expect(frames.find((f) => f.event === 'message_delta')!.data.delta).toEqual({ stop_reason: 'stop_sequence', stop_sequence: 'mock' });
      const final = await anthropic.messages.stream({ ...ask, model: 'claude', stop_sequences: ['mock'] }).finalMessage();
      expect(final).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'mock' });
    });

    test('OpenAI SDK → Anthropic upstream: finish_reason stop (OpenAI has no field for which sequence), buffered and streamed', async () => {
      const completion = await openai.chat.completions.create({ model: 'claude', messages: ask.messages, stop: ['mock'] });
      expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Switchyard routes this ' } });
      const stream = await openai.chat.completions.create({ model: 'claude', messages: ask.messages, stop: ['mock'], stream: true });
      const finishes: unknown[] = [];
      for await (const chunk of stream) for (const choice of chunk.choices) if (choice.finish_reason) finishes.push(choice.finish_reason);
      expect(finishes).toEqual(['stop']);
      expect(gw.mock.requests().map((r) => (r.body as { stop_sequences?: unknown }).stop_sequences)).toEqual([['mock'], ['mock']]);
    });

    test('Anthropic SDK → OpenAI upstream: the upstream does not say which sequence matched, so end_turn and null', async () => {
      const message = await anthropic.messages.create({ ...ask, model: 'gpt', stop_sequences: ['mock'] });
      expect(message).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null, content: [{ type: 'text', text: 'Switchyard routes this ' }] });
      expect(gw.mock.requests()[0].body).toMatchObject({ stop: ['mock'] });
    });
  });

  describe('interleaved parallel tool calls from an OpenAI upstream (item 4)', () => {
    test('the order check itself refuses what clients cannot take: a delta for a stopped block, two open blocks, no message_delta', () => {
      const f = (event: string, extra: Record<string, unknown> = {}) => ({ event, data: { type: event, ...extra }, at: 0 });
      const head = [f('message_start'), f('ping'), f('content_block_start', { index: 0 }), f('content_block_stop', { index: 0 }), f('content_block_start', { index: 1 })];
      expect(anthropicOrderViolation([...head, f('content_block_delta', { index: 0 })])).toMatch(/delta for block 0, open is 1/);
      expect(anthropicOrderViolation([...head, f('content_block_start', { index: 2 })])).toMatch(/while block 1 is open/);
      expect(anthropicOrderViolation([...head, f('content_block_stop', { index: 1 }), f('message_stop')])).toMatch(/without message_delta/);
      expect(anthropicOrderViolation([...head, f('content_block_stop', { index: 1 }), f('message_delta'), f('message_stop')])).toBeNull();
    });

    const twoTools = { ...ask, model: 'gpt', tools: [weather, time] };

    test('the OpenAI-format client gets both calls as the upstream interleaved them (the mock does interleave)', async () => {
      gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { parallelToolCalls: true, chunks: 4 } });
      const stream = await openai.chat.completions.create({
        model: 'gpt', stream: true, messages: ask.messages,
        tools: [weather, time].map((t) => ({ type: 'function' as const, function: { name: t.name, parameters: t.input_schema } })),
      });
      const order: number[] = [];
      for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) if (call.function?.arguments) order.push(call.index);
      expect(order.slice(0, 4)).toEqual([0, 1, 0, 1]);
    });

    test('streamed: a valid Anthropic event sequence, each call one whole block, and the SDK final message has both full arguments', async () => {
      gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { parallelToolCalls: true, chunks: 4 } });
      const frames = await streamRaw(twoTools);
      expect(anthropicOrderViolation(frames)).toBeNull();
      const starts = frames.filter((f) => f.event === 'content_block_start').map((f) => f.data.content_block);
      expect(starts).toEqual([
        { type: 'tool_use', id: expect.stringMatching(/^call_mock_\d+$/), name: 'get_weather', input: {} },
        { type: 'tool_use', id: expect.stringMatching(/^call_mock_\d+_1$/), name: 'get_time', input: {} },
      ]);
      // Each block: start, one input_json_delta with the call's whole input, stop.
      const deltas = frames.filter((f) => f.event === 'content_block_delta').map((f) => [f.data.index, JSON.parse((f.data.delta as { partial_json: string }).partial_json)]);
      expect(deltas).toEqual([[0, { city: 'Paris' }], [1, { tz: 'Paris', hours: 42 }]]);
      expect(frames.find((f) => f.event === 'message_delta')!.data.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });

      const final = await anthropic.messages.stream(twoTools).finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content.map((b) => (b.type === 'tool_use' ? { name: b.name, input: b.input } : b))).toEqual([
        { name: 'get_weather', input: { city: 'Paris' } },
        { name: 'get_time', input: { tz: 'Paris', hours: 42 } },
      ]);
      // What the upstream was asked: both tools, and the answer streamed as interleaved pieces.
      expect(gw.mock.requests().map((r) => (r.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name))).toEqual([
        ['get_weather', 'get_time'], ['get_weather', 'get_time'],
      ]);
    });

    test('buffered: both calls with their full arguments', async () => {
      gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { parallelToolCalls: true, chunks: 4 } });
      const message = await anthropic.messages.create(twoTools);
      expect(message.stop_reason).toBe('tool_use');
      expect(message.content).toEqual([
        { type: 'tool_use', id: expect.stringMatching(/^call_mock_\d+$/), name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: expect.stringMatching(/^call_mock_\d+_1$/), name: 'get_time', input: { tz: 'Paris', hours: 42 } },
      ]);
    });

    test('the first byte is not held: message_start arrives before the upstream has finished, the tool blocks after', async () => {
      gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { parallelToolCalls: true, chunks: 6, chunkGapMs: 40 } });
      const sentAt = Date.now();
      const frames = await streamRaw(twoTools);
      expect(anthropicOrderViolation(frames)).toBeNull();
      const messageStart = frames.find((f) => f.event === 'message_start')!.at;
      const firstBlock = frames.find((f) => f.event === 'content_block_start')!.at;
      // Causal rather than timed (a busy machine delays any one frame): message_start reached the client while the
      // upstream was still answering — five 40 ms gaps separate its first and last pieces — and the calls, written
      // once complete, came after it.
      const upstream = gw.mock.requests().at(-1)!;
      expect(upstream.endedAt).not.toBeNull();
      expect(sentAt + messageStart).toBeLessThan(upstream.endedAt!);
      expect(firstBlock).toBeGreaterThan(messageStart);
      if (process.env.SY_REPORT_TIMINGS) process.stdout.write(`message_start ${messageStart.toFixed(1)} ms, first tool block ${firstBlock.toFixed(1)} ms\n`);
    });
  });

  describe('which stop sequence matched, through Bedrock (Claude names it when asked), Gemini (it does not say) and stored answers', () => {
    let all: TestGateway;
    let viaAll: Anthropic;
    beforeAll(async () => {
      process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
      // the exact cache on (the harness turns it off by default): stored answers must keep the stop sequence
      all = await startTestGateway({ yaml: conformanceYaml, environment: { cache: {} } });
      viaAll = new Anthropic({ baseURL: all.url, apiKey: all.key, maxRetries: 0 });
    });
    afterAll(async () => {
      await all.close();
    });

    test('a stored answer keeps it: the exact cache replays stop_sequence and the match, buffered and streamed', async () => {
      all.mock.clearRequests();
      for (const stream of [false, true]) {
        const body = { ...ask, model: 'anthropic', stop_sequences: ['mock'], messages: [{ role: 'user', content: `cache me ${String(stream)}` }], stream };
        const send = () => fetch(`${all.url}/v1/messages`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': all.key, 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body),
        });
        const first = await send();
        expect(first.headers.get('x-switchyard-cache')).toBe('miss');
        await first.text();
        const replay = await send();
        expect(replay.headers.get('x-switchyard-cache')).toBe('hit');
        const text = await replay.text();
        if (stream) expect(text).toContain('"delta":{"stop_reason":"stop_sequence","stop_sequence":"mock"}');
        else expect(JSON.parse(text)).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'mock' });
      }
      expect(all.mock.requests()).toHaveLength(2); // one provider call per body; the repeats were served from the cache
    });

    test('Bedrock: the gateway asks for /stop_sequence, and the Anthropic client gets stop_sequence and the match, buffered and streamed', async () => {
      all.mock.clearRequests();
      const buffered = await viaAll.messages.create({ ...ask, model: 'bedrock', stop_sequences: ['mock'] });
      expect(buffered).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'mock', content: [{ type: 'text', text: 'Switchyard routes this ' }] });
      // another prompt, so the stream comes from Bedrock's stream and not from the exact cache
      const final = await viaAll.messages.stream({ ...ask, model: 'bedrock', stop_sequences: ['mock'], messages: [{ role: 'user', content: 'Streamed' }] }).finalMessage();
      expect(final).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'mock' });
      expect(all.mock.requests().map((r) => r.stream)).toEqual([false, true]);
      for (const call of all.mock.requests()) {
        expect(call.body).toMatchObject({ inferenceConfig: { stopSequences: ['mock'] }, additionalModelResponseFieldPaths: ['/stop_sequence'] });
      }
      all.mock.clearRequests();
      // no stop sequences asked for: no extra response field asked for either
      expect(await viaAll.messages.create({ ...ask, model: 'bedrock', messages: [{ role: 'user', content: 'No stops' }] })).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
      expect(all.mock.requests()[0].body).not.toHaveProperty('additionalModelResponseFieldPaths');
    });

    test('Gemini: it reports only STOP, so the Anthropic client gets end_turn and null', async () => {
      all.mock.clearRequests();
      expect(await viaAll.messages.create({ ...ask, model: 'gemini', stop_sequences: ['mock'] })).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
      expect(all.mock.requests()[0].body).toMatchObject({ generationConfig: { stopSequences: ['mock'] } });
    });
  });
});
