import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatRequest, ReasoningPart } from '../../modules/canonical/chat-request.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { ANTHROPIC_PARAMETERS } from '../../modules/providers/anthropic/anthropic-parameters.js';
import { toAnthropicRequest } from '../../modules/providers/anthropic/anthropic-request.js';
import { BEDROCK_PARAMETERS } from '../../modules/providers/bedrock/bedrock-parameters.js';
import { toConverseRequest } from '../../modules/providers/bedrock/bedrock-request.js';
import { GEMINI_PARAMETERS } from '../../modules/providers/gemini/gemini-parameters.js';
import { toGeminiRequest } from '../../modules/providers/gemini/gemini-request.js';
import { AZURE_OPENAI_PARAMETERS, OPENAI_COMPATIBLE_PARAMETERS, OPENAI_PARAMETERS } from '../../modules/providers/openai/openai-parameters.js';
import { toOpenAiRequest } from '../../modules/providers/openai/openai-request.js';
import { type ParameterTable, REQUESTED, TABLE_PARAMETERS, type TableParameter, refusedParameter, unsentParameters } from '../../modules/providers/parameters/parameter-table.js';
import { ProviderAdapters } from '../../modules/providers/provider-adapters.js';
import type { ProviderType } from '../../events/provider-events.js';
import { renderParameterTable } from '../../modules/providers/parameters/parameter-doc.js';
import { chatRequest, resolvedDeployment } from '../support/provider-fixtures.js';

const weather = { name: 'get_weather', description: null, parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: null };
const toolTurn: Partial<ChatRequest> = { tools: [weather] };

/** For every table parameter: a request that asks for it (a non-default value). */
const ASKING: Readonly<Record<TableParameter, Partial<ChatRequest>>> = {
  frequency_penalty: { frequencyPenalty: 0.5 },
  presence_penalty: { presencePenalty: -0.5 },
  logit_bias: { logitBias: { '50256': -100 } },
  logprobs: { logprobs: true },
  top_logprobs: { logprobs: true, topLogprobs: 3 },
  seed: { seed: 7 },
  top_k: { topK: 40 },
  reasoning_effort: { reasoning: { effort: 'low', budgetTokens: null }, maxOutputTokens: 8000 },
  verbosity: { verbosity: 'low' },
  service_tier: { serviceTier: 'flex' },
  parallel_tool_calls: { ...toolTurn, parallelToolCalls: false },
  response_format: { responseFormat: { type: 'json_object' } },
  stop: { stop: ['END'] },
  n: { n: 2 },
  user: { user: 'end-user-1' },
  metadata: { metadata: { team: 'search' } },
  safety_identifier: { safetyIdentifier: 'hashed-user' },
  prompt_cache_key: { promptCacheKey: 'tenant-a-prompt-v3' },
  prompt_cache_retention: { promptCacheRetention: '24h' },
  store: { store: true },
  modalities: { modalities: ['text', 'audio'] },
  prediction: { prediction: { type: 'content', content: 'const x = 1;' } },
  cache_control: {
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'Long instructions', cacheControl: { type: 'ephemeral', ttl: null } }] },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    ],
  },
  eager_input_streaming: { tools: [{ ...weather, eagerInputStreaming: true }] },
  'tools[].function.strict': { tools: [{ ...weather, strict: true }] },
  'anthropic-beta': { anthropicBetas: ['token-efficient-tools-2025-02-19', 'context-1m-2025-08-07'] },
};

const personFormat = {
  type: 'json_schema' as const, name: 'person', strict: true, description: null,
  schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
};

/** What each provider format's wire body carries for a parameter it passes or translates. */
const WIRE: Readonly<Record<'openai' | 'anthropic' | 'gemini' | 'bedrock', Partial<Record<TableParameter, (body: any) => void>>>> = {
  openai: {
    frequency_penalty: (b) => expect(b.frequency_penalty).toBe(0.5),
    presence_penalty: (b) => expect(b.presence_penalty).toBe(-0.5),
    logit_bias: (b) => expect(b.logit_bias).toEqual({ '50256': -100 }),
    logprobs: (b) => expect(b.logprobs).toBe(true),
    top_logprobs: (b) => expect(b).toMatchObject({ logprobs: true, top_logprobs: 3 }),
    seed: (b) => expect(b.seed).toBe(7),
    top_k: (b) => expect(b.top_k).toBe(40),
    reasoning_effort: (b) => expect(b.reasoning_effort).toBe('low'),
    verbosity: (b) => expect(b.verbosity).toBe('low'),
    service_tier: (b) => expect(b.service_tier).toBe('flex'),
    parallel_tool_calls: (b) => expect(b.parallel_tool_calls).toBe(false),
    response_format: (b) => expect(b.response_format).toEqual({ type: 'json_object' }),
    stop: (b) => expect(b.stop).toEqual(['END']),
    n: (b) => expect(b.n).toBe(2),
    user: (b) => expect(b.user).toBe('end-user-1'),
    metadata: (b) => expect(b.metadata).toEqual({ team: 'search' }),
    safety_identifier: (b) => expect(b.safety_identifier).toBe('hashed-user'),
    prompt_cache_key: (b) => expect(b.prompt_cache_key).toBe('tenant-a-prompt-v3'),
    prompt_cache_retention: (b) => expect(b.prompt_cache_retention).toBe('24h'),
    store: (b) => expect(b.store).toBe(true),
    modalities: (b) => expect(b.modalities).toEqual(['text', 'audio']),
    prediction: (b) => expect(b.prediction).toEqual({ type: 'content', content: 'const x = 1;' }),
    // Automatic prefix caching: the breakpoint has nowhere to go and the prompt is sent unchanged.
    cache_control: (b) => expect(b.messages[0]).toEqual({ role: 'system', content: 'Long instructions' }),
    eager_input_streaming: (b) => expect(b.tools[0].function.name).toBe('get_weather'),
    'tools[].function.strict': (b) => expect(b.tools[0].function).toMatchObject({ name: 'get_weather', strict: true }),
  },
  anthropic: {
    top_k: (b) => expect(b.top_k).toBe(40),
    reasoning_effort: (b) => expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 }),
    service_tier: (b) => expect(b.service_tier).toBe('standard_only'),
    parallel_tool_calls: (b) => expect(b.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true }),
    stop: (b) => expect(b.stop_sequences).toEqual(['END']),
    user: (b) => expect(b.metadata).toEqual({ user_id: 'end-user-1' }),
    safety_identifier: (b) => expect(b.metadata).toEqual({ user_id: 'hashed-user' }),
    cache_control: (b) => expect(b.system).toEqual([{ type: 'text', text: 'Long instructions', cache_control: { type: 'ephemeral' } }]),
    eager_input_streaming: (b) => expect(b.tools[0]).toMatchObject({ name: 'get_weather', eager_input_streaming: true }),
    'tools[].function.strict': (b) => expect(b.tools[0]).toMatchObject({ name: 'get_weather', strict: true }),
    // A header, not a body field, on Anthropic's own API (the adapter sets it; the e2e suite asserts what arrives).
    'anthropic-beta': (b) => expect(JSON.stringify(b)).not.toContain('context-1m-2025-08-07'),
    response_format: (b) => expect(b.output_config).toEqual({ format: { type: 'json_schema', schema: personFormat.schema } }),
  },
  gemini: {
    frequency_penalty: (b) => expect(b.generationConfig.frequencyPenalty).toBe(0.5),
    presence_penalty: (b) => expect(b.generationConfig.presencePenalty).toBe(-0.5),
    logprobs: (b) => expect(b.generationConfig.responseLogprobs).toBe(true),
    top_logprobs: (b) => expect(b.generationConfig).toMatchObject({ responseLogprobs: true, logprobs: 3 }),
    seed: (b) => expect(b.generationConfig.seed).toBe(7),
    top_k: (b) => expect(b.generationConfig.topK).toBe(40),
    reasoning_effort: (b) => expect(b.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 2048, includeThoughts: true }),
    response_format: (b) => expect(b.generationConfig.responseMimeType).toBe('application/json'),
    stop: (b) => expect(b.generationConfig.stopSequences).toEqual(['END']),
    n: (b) => expect(b.generationConfig.candidateCount).toBe(2),
    cache_control: (b) => expect(b.systemInstruction).toEqual({ parts: [{ text: 'Long instructions' }] }),
    eager_input_streaming: (b) => expect(b.tools[0].functionDeclarations[0].name).toBe('get_weather'),
    // No strict flag exists on the Gemini wire: the declaration goes as for any tool.
    'tools[].function.strict': (b) => expect(b.tools[0].functionDeclarations[0]).not.toHaveProperty('strict'),
  },
  bedrock: {
    top_k: (b) => expect(b.additionalModelRequestFields).toEqual({ top_k: 40 }),
    reasoning_effort: (b) => expect(b.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } }),
    stop: (b) => expect(b.inferenceConfig.stopSequences).toEqual(['END']),
    user: (b) => expect(b.requestMetadata).toEqual({ user: 'end-user-1' }),
    metadata: (b) => expect(b.requestMetadata).toEqual({ team: 'search' }),
    safety_identifier: (b) => expect(b.requestMetadata).toEqual({ safety_identifier: 'hashed-user' }),
    cache_control: (b) => expect(b.system).toEqual([{ text: 'Long instructions' }, { cachePoint: { type: 'default' } }]),
    eager_input_streaming: (b) => expect(b.toolConfig.tools[0].toolSpec.name).toBe('get_weather'),
    'anthropic-beta': (b) => expect(b.additionalModelRequestFields).toEqual({ anthropic_beta: ['token-efficient-tools-2025-02-19', 'context-1m-2025-08-07'] }),
  },
};

const CLAUDE_ON_BEDROCK = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

interface FormatCase {
  type: ProviderType;
  table: ParameterTable;
  wire: keyof typeof WIRE;
  deployment: ResolvedDeployment;
  build: (request: ChatRequest) => unknown;
}

const FORMATS: FormatCase[] = [
  { type: 'openai', table: OPENAI_PARAMETERS, wire: 'openai', deployment: resolvedDeployment('openai', { capabilities: ['chat', 'n'] }), build: (r) => toOpenAiRequest(r, { model: 'gpt', maxTokensField: 'max_completion_tokens', stream: false }) },
  { type: 'mock', table: OPENAI_PARAMETERS, wire: 'openai', deployment: resolvedDeployment('mock', { capabilities: ['chat', 'n'] }), build: (r) => toOpenAiRequest(r, { model: 'gpt', maxTokensField: 'max_tokens', stream: false }) },
  { type: 'openai-compatible', table: OPENAI_COMPATIBLE_PARAMETERS, wire: 'openai', deployment: resolvedDeployment('openai-compatible', { capabilities: ['chat', 'n'] }), build: (r) => toOpenAiRequest(r, { model: 'llama', maxTokensField: 'max_tokens', stream: false }) },
  { type: 'azure-openai', table: AZURE_OPENAI_PARAMETERS, wire: 'openai', deployment: resolvedDeployment('azure-openai', { apiVersion: '2024-10-21', capabilities: ['chat', 'n'] }), build: (r) => toOpenAiRequest(r, { model: null, maxTokensField: 'max_completion_tokens', stream: false }) },
  { type: 'anthropic', table: ANTHROPIC_PARAMETERS, wire: 'anthropic', deployment: resolvedDeployment('anthropic', { capabilities: ['chat', 'tools', 'strict_tools', 'json_schema', 'structured_outputs'] }), build: (r) => toAnthropicRequest(r, { model: 'claude', defaultMaxTokens: 4096, maxOutputTokens: 8192, stream: false }) },
  { type: 'gemini', table: GEMINI_PARAMETERS, wire: 'gemini', deployment: resolvedDeployment('gemini', { capabilities: ['chat', 'n'] }), build: (r) => toGeminiRequest(r) },
  { type: 'bedrock', table: BEDROCK_PARAMETERS, wire: 'bedrock', deployment: resolvedDeployment('bedrock', { model: CLAUDE_ON_BEDROCK }), build: (r) => toConverseRequest(r, 8192) },
];

/** A value that row's own `honours` accepts (Anthropic knows only its own service tiers). */
function askingFor(format: FormatCase, parameter: TableParameter): ChatRequest {
  const overrides = { ...ASKING[parameter] };
  if (parameter === 'service_tier' && format.type === 'anthropic') overrides.serviceTier = 'standard_only';
  // Anthropic has structured outputs but no schema-less JSON mode.
  if (parameter === 'response_format' && format.type === 'anthropic') overrides.responseFormat = personFormat;
  return chatRequest(overrides);
}

describe('parameter tables: every row of every provider format', () => {
  const adapters = new ProviderAdapters();

  test('every table has a row for every parameter, and every requested fixture is "asked for"', () => {
    for (const format of FORMATS) expect(Object.keys(format.table).sort()).toEqual([...TABLE_PARAMETERS].sort());
    for (const parameter of TABLE_PARAMETERS) expect(REQUESTED[parameter](chatRequest(ASKING[parameter]))).toBe(true);
  });

  test('a plain request asks for none of them and every route honours it', () => {
    for (const parameter of TABLE_PARAMETERS) expect(REQUESTED[parameter](chatRequest())).toBe(false);
    for (const format of FORMATS) expect(adapters.for(format.type)!.unsupportedParameter(chatRequest(), format.deployment)).toBeNull();
  });

  test('neutral values ask for nothing: penalties 0, store false, service tier auto/default, text-only modalities, in-memory cache retention', () => {
    const neutral = chatRequest({ frequencyPenalty: 0, presencePenalty: 0, store: false, serviceTier: 'auto', modalities: ['text'], logitBias: {}, topLogprobs: 0, promptCacheRetention: 'in_memory' });
    for (const format of FORMATS) expect(adapters.for(format.type)!.unsupportedParameter(neutral, format.deployment)).toBeNull();
    expect(adapters.for('anthropic')!.unsupportedParameter(chatRequest({ serviceTier: 'default' }), resolvedDeployment('anthropic'))).toBeNull();
  });

  for (const format of FORMATS) {
    describe(`${format.type}`, () => {
      test.each([...TABLE_PARAMETERS])('%s: refused by name, or passed/translated onto the wire', (parameter) => {
        const row = format.table[parameter];
        const request = askingFor(format, parameter);
        const refused = adapters.for(format.type)!.unsupportedParameter(request, format.deployment);
        if (row.handling === 'refuse') {
          // top_logprobs needs logprobs: true, which the same provider refuses first.
          expect(refused).toBe(parameter === 'top_logprobs' && format.table.logprobs.handling === 'refuse' ? 'logprobs' : parameter);
          expect(row.wire).toBeNull();
          return;
        }
        expect(refused).toBeNull();
        const check = WIRE[format.wire][parameter];
        if (!check) throw new Error(`no wire fixture for ${format.type}.${parameter} (${row.handling})`);
        check(format.build(request));
      });
    });
  }
});

describe('parameter tables: rows that depend on the deployment or the value', () => {
  const adapters = new ProviderAdapters();

  test('Bedrock honours top_k and thinking for Claude models only', () => {
    const titan = resolvedDeployment('bedrock', { model: 'amazon.titan-text-premier-v1:0' });
    const claude = resolvedDeployment('bedrock', { model: `us.${CLAUDE_ON_BEDROCK}` });
    expect(refusedParameter(BEDROCK_PARAMETERS, chatRequest({ topK: 5 }), titan)).toBe('top_k');
    expect(refusedParameter(BEDROCK_PARAMETERS, chatRequest({ topK: 5 }), claude)).toBeNull();
    expect(refusedParameter(BEDROCK_PARAMETERS, chatRequest({ reasoning: { effort: 'high', budgetTokens: null } }), titan)).toBe('reasoning_effort');
    expect(refusedParameter(BEDROCK_PARAMETERS, chatRequest({ anthropicBetas: ['context-1m-2025-08-07'] }), titan)).toBe('anthropic-beta');
    expect(refusedParameter(BEDROCK_PARAMETERS, chatRequest({ anthropicBetas: ['context-1m-2025-08-07'] }), claude)).toBeNull();
  });

  test('Anthropic: only its own service tiers; an effort needs max_tokens ≥ 2048 for a 1024-token budget; a named budget is kept', () => {
    const deployment = resolvedDeployment('anthropic');
    expect(refusedParameter(ANTHROPIC_PARAMETERS, chatRequest({ serviceTier: 'priority' }), deployment)).toBe('service_tier');
    expect(refusedParameter(ANTHROPIC_PARAMETERS, chatRequest({ reasoning: { effort: 'high', budgetTokens: null }, maxOutputTokens: 1500 }), deployment)).toBe('reasoning_effort');
    const fitted = toAnthropicRequest(chatRequest({ reasoning: { effort: 'high', budgetTokens: null }, maxOutputTokens: 3000 }), { model: 'c', defaultMaxTokens: 4096, stream: false });
    expect(fitted).toMatchObject({ max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1500 } });
    const named = toAnthropicRequest(chatRequest({ reasoning: { effort: null, budgetTokens: 5000 }, maxOutputTokens: 6000 }), { model: 'c', defaultMaxTokens: 4096, stream: false });
    expect(named.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
    // No client limit: the budget comes on top of the default answer budget, within the deployment's ceiling.
    const unlimited = toAnthropicRequest(chatRequest({ reasoning: { effort: 'medium', budgetTokens: null } }), { model: 'c', defaultMaxTokens: 4096, maxOutputTokens: 64000, stream: false });
    expect(unlimited).toMatchObject({ max_tokens: 8192 + 4096, thinking: { budget_tokens: 8192 } });
  });

  test('Anthropic honours strict tools only on deployments declaring strict_tools; strict: false asks for nothing', () => {
    const strict = chatRequest({ tools: [weather, { ...weather, name: 'get_time', strict: true }] });
    expect(adapters.for('anthropic')!.unsupportedParameter(strict, resolvedDeployment('anthropic'))).toBe('tools[].function.strict');
    expect(adapters.for('anthropic')!.unsupportedParameter(strict, resolvedDeployment('anthropic', { capabilities: ['chat', 'tools', 'strict_tools'] }))).toBeNull();
    const body = toAnthropicRequest(strict, { model: 'c', defaultMaxTokens: 1000, stream: false });
    // Only the tool that asked is strict; a tool without the flag keeps Anthropic's default.
    expect(body.tools?.map((t) => t.strict)).toEqual([undefined, true]);
    const loose = chatRequest({ tools: [{ ...weather, strict: false }] });
    for (const format of FORMATS) expect(adapters.for(format.type)!.unsupportedParameter(loose, resolvedDeployment(format.type))).toBeNull();
    expect(toAnthropicRequest(loose, { model: 'c', defaultMaxTokens: 1000, stream: false }).tools?.[0]).not.toHaveProperty('strict');
  });

  test('Anthropic honours json_schema response_format as output_config.format only on structured_outputs deployments; json_object never', () => {
    const anthropic = adapters.for('anthropic')!;
    const structured = resolvedDeployment('anthropic', { capabilities: ['chat', 'json_schema', 'structured_outputs'] });
    expect(anthropic.unsupportedParameter(chatRequest({ responseFormat: personFormat }), resolvedDeployment('anthropic', { capabilities: ['chat', 'json_schema'] }))).toBe('response_format');
    expect(anthropic.unsupportedParameter(chatRequest({ responseFormat: { type: 'json_object' } }), structured)).toBe('response_format');
    expect(anthropic.unsupportedParameter(chatRequest({ responseFormat: personFormat }), structured)).toBeNull();
    expect(anthropic.unsupportedParameter(chatRequest({ responseFormat: { type: 'text' } }), resolvedDeployment('anthropic'))).toBeNull();
    expect(toAnthropicRequest(chatRequest({ responseFormat: personFormat }), { model: 'c', defaultMaxTokens: 1000, stream: false }).output_config)
      .toEqual({ format: { type: 'json_schema', schema: personFormat.schema } });
    expect(toAnthropicRequest(chatRequest({ responseFormat: { type: 'text' } }), { model: 'c', defaultMaxTokens: 1000, stream: false })).not.toHaveProperty('output_config');
  });

  test('Anthropic: user and safety_identifier share metadata.user_id, so two different ids cannot both be honoured', () => {
    const deployment = resolvedDeployment('anthropic');
    expect(adapters.for('anthropic')!.unsupportedParameter(chatRequest({ user: 'a', safetyIdentifier: 'b' }), deployment)).toBe('safety_identifier');
    expect(adapters.for('anthropic')!.unsupportedParameter(chatRequest({ user: 'a', safetyIdentifier: 'a' }), deployment)).toBeNull();
  });

  test('a thinking budget becomes an OpenAI effort band, and an effort a Gemini budget', () => {
    const effort = (budgetTokens: number) => (toOpenAiRequest(chatRequest({ reasoning: { effort: null, budgetTokens } }), { model: 'o', maxTokensField: 'max_completion_tokens', stream: false }) as any).reasoning_effort;
    expect([1024, 2048, 5000, 30000].map(effort)).toEqual(['minimal', 'low', 'medium', 'high']);
    expect(toGeminiRequest(chatRequest({ reasoning: { effort: 'high', budgetTokens: null } })).generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 24576, includeThoughts: true });
  });

  test('Gemini: at most 5 stop sequences and 20 alternatives per token', () => {
    const gemini = resolvedDeployment('gemini');
    expect(adapters.for('gemini')!.unsupportedParameter(chatRequest({ stop: ['a', 'b', 'c', 'd', 'e', 'f'] }), gemini)).toBe('stop');
    expect(adapters.for('gemini')!.unsupportedParameter(chatRequest({ logprobs: true, topLogprobs: 20 }), gemini)).toBeNull();
  });

  test('cache_control on tools and tool results: Anthropic keeps them on the block, Bedrock adds cachePoint blocks after them', () => {
    const request = chatRequest({
      tools: [{ ...weather, cacheControl: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 't1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: 'sunny' }], cacheControl: { type: 'ephemeral', ttl: null } },
      ],
    });
    const anthropic = toAnthropicRequest(request, { model: 'c', defaultMaxTokens: 1000, stream: false }) as any;
    expect(anthropic.tools[0].cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(anthropic.messages[2].content[0]).toMatchObject({ type: 'tool_result', cache_control: { type: 'ephemeral' } });
    const converse = toConverseRequest(request) as any;
    expect(converse.toolConfig.tools[1]).toEqual({ cachePoint: { type: 'default' } });
    expect(converse.messages[2].content[1]).toEqual({ cachePoint: { type: 'default' } });
  });

  test('signed thinking goes back first and unchanged; unsigned thinking (another provider\'s) is left out', () => {
    const request = chatRequest({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant', content: [], toolCalls: [{ id: 't1', name: 'get_weather', arguments: '{}' }],
          reasoning: [{ type: 'thinking', text: 'I should call it.', signature: 'sig-1' }, { type: 'redacted_thinking', data: 'b3BhcXVl' }, { type: 'thinking', text: 'unsigned', signature: null }],
        },
        { role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: 'sunny' }] },
      ],
    });
    const anthropic = toAnthropicRequest(request, { model: 'c', defaultMaxTokens: 1000, stream: false }) as any;
    expect(anthropic.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'I should call it.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'b3BhcXVl' },
      { type: 'tool_use', id: 't1', name: 'get_weather', input: {} },
    ]);
    const converse = toConverseRequest(request) as any;
    expect(converse.messages[1].content.slice(0, 2)).toEqual([
      { reasoningContent: { reasoningText: { text: 'I should call it.', signature: 'sig-1' } } },
      { reasoningContent: { redactedContent: 'b3BhcXVl' } },
    ]);
    const openai = toOpenAiRequest(request, { model: 'o', maxTokensField: 'max_tokens', stream: false }) as any;
    expect(openai.messages[1]).not.toHaveProperty('reasoning_content');
  });
});

describe('parameters accepted without a wire field: the per-request note', () => {
  test('every translate row without a wire field is what unsentParameters names, and nothing else', () => {
    for (const format of FORMATS) {
      for (const parameter of TABLE_PARAMETERS) {
        const row = format.table[parameter];
        const unsent = unsentParameters(format.table, askingFor(format, parameter), format.deployment);
        expect([format.type, parameter, unsent.includes(parameter)]).toEqual([format.type, parameter, row.handling === 'translate' && row.wire === null]);
      }
    }
  });

  test('Gemini: strict tools and eager input streaming are named; a plain request names nothing', () => {
    const gemini = resolvedDeployment('gemini');
    const request = chatRequest({ tools: [{ ...weather, strict: true, eagerInputStreaming: true }] });
    expect(new ProviderAdapters().for('gemini')!.unsentParameters(request, gemini)).toEqual(['eager_input_streaming', 'tools[].function.strict']);
    expect(new ProviderAdapters().for('gemini')!.unsentParameters(chatRequest(), gemini)).toEqual([]);
    // Anthropic sends both.
    expect(new ProviderAdapters().for('anthropic')!.unsentParameters(request, resolvedDeployment('anthropic', { capabilities: ['chat', 'tools', 'strict_tools'] }))).toEqual([]);
  });
});

describe('thinking on a tool-use continuation the client kept no thinking for', () => {
  const continuation = (reasoning?: ReasoningPart[]): Partial<ChatRequest> => ({
    reasoning: { effort: 'low', budgetTokens: null },
    maxOutputTokens: 8000,
    tools: [weather],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: [], toolCalls: [{ id: 't1', name: 'get_weather', arguments: '{"city":"Paris"}' }], ...(reasoning ? { reasoning } : {}) },
      { role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: 'sunny' }] },
    ],
  });

  test('Anthropic and Claude on Bedrock: sent without thinking (Claude would refuse the turn), the answer budget unchanged', () => {
    const anthropic = toAnthropicRequest(chatRequest(continuation()), { model: 'c', defaultMaxTokens: 4096, stream: false });
    expect(anthropic).not.toHaveProperty('thinking');
    expect(anthropic.max_tokens).toBe(8000);
    const converse = toConverseRequest(chatRequest(continuation()), 8192) as any;
    expect(converse.additionalModelRequestFields?.thinking).toBeUndefined();
    // Another provider's unsigned thinking is left out of the body, so it does not help either.
    expect(toAnthropicRequest(chatRequest(continuation([{ type: 'thinking', text: 'x', signature: null }])), { model: 'c', defaultMaxTokens: 4096, stream: false })).not.toHaveProperty('thinking');
  });

  test('with the signed thinking sent back, or on a new user turn, thinking stays on', () => {
    const signed = toAnthropicRequest(chatRequest(continuation([{ type: 'thinking', text: 'I should call it.', signature: 'sig-1' }])), { model: 'c', defaultMaxTokens: 4096, stream: false });
    expect(signed.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const redacted = toConverseRequest(chatRequest(continuation([{ type: 'redacted_thinking', data: 'b3BhcXVl' }])), 8192) as any;
    expect(redacted.additionalModelRequestFields.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const next = continuation();
    next.messages = [...next.messages!, { role: 'assistant', content: [{ type: 'text', text: 'Sunny.' }], toolCalls: [] }, { role: 'user', content: [{ type: 'text', text: 'And Rome?' }] }];
    expect(toAnthropicRequest(chatRequest(next), { model: 'c', defaultMaxTokens: 4096, stream: false }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });
});

test('the parameters reference shows the parameter tables exactly as the code declares them', () => {
  // The page is generated (npm run docs:generate); reference-docs.test.ts checks the whole page, this the table in it.
  expect(readFileSync(join(process.cwd(), 'docs/reference/parameters.md'), 'utf8')).toContain(renderParameterTable());
});
