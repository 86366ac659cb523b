import { ByteBoundedLru } from '../../modules/cache/byte-bounded-lru.js';
import { purgeCutoff } from '../../modules/cache/admin/cache-purge.js';
import { DEFAULT_CACHE_KNOBS, readCacheOverrides } from '../../modules/cache/cache-settings.js';
import { exactCacheDigest } from '../../modules/cache/exact-cache.js';
import { MemoryExactCache } from '../../modules/cache/memory-exact-cache.js';
import { MemoryIdempotencyStore } from '../../modules/cache/memory-idempotency-store.js';
import { type StoredAnswer, storedBytes } from '../../modules/cache/stored-answer.js';
import type { ChatRequest } from '../../modules/canonical/chat-request.js';
import { openAiClientFormat } from '../../modules/inference/formats/openai/openai-client-format.js';
import { AnswerCapture } from '../../modules/inference/pipeline/answer-capture.js';
import { aliasDefinitionProblem } from '../../modules/catalog/alias/alias.decider.js';
import { ConfigValidationError, parseGatewayConfig } from '../../src/config/gateway-config.js';
import { UNSET_PARAMETERS } from '../../modules/canonical/chat-request.js';

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'chat',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  maxOutputTokens: null, temperature: 0.2, topP: null, stop: [], stream: false, includeUsage: false, tools: [], toolChoice: null,
  parallelToolCalls: null, responseFormat: null, seed: null, user: null, metadata: null, n: 1,
  ...UNSET_PARAMETERS,
  ...overrides,
});

const answer = (text: string): StoredAnswer => ({
  requestId: 'r1', created: 1, response: { providerRequestId: null, choices: [{ index: 0, text, toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null }], usage: null },
  usage: { input: 1, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 },
  source: { deploymentId: 'd', providerId: 'p', model: 'm', priceVersion: 1, costUsd: '0.001' },
});

describe('byte-bounded LRU', () => {
  test('never holds more bytes than its bound: the least recently used go first', () => {
    const lru = new ByteBoundedLru<string>(100);
    lru.set('a', 'a', 40, 60_000);
    lru.set('b', 'b', 40, 60_000);
    expect(lru.get('a')).toBe('a'); // a is now the most recently used
    lru.set('c', 'c', 40, 60_000);
    expect(lru.bytes).toBe(80);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe('a');
    expect(lru.get('c')).toBe('c');
    expect(lru.set('huge', 'x', 101, 60_000)).toBe(false);
    expect(lru.bytes).toBe(80); // a refused entry evicts nothing
  });

  test('entries expire', () => {
    let now = 1_000;
    const lru = new ByteBoundedLru<string>(100, () => now);
    lru.set('a', 'a', 10, 500);
    now += 499;
    expect(lru.get('a')).toBe('a');
    now += 1;
    expect(lru.get('a')).toBeUndefined();
    expect(lru.bytes).toBe(0);
  });
});

describe('in-memory exact cache', () => {
  test('its byte bound holds however many answers arrive, and a too-large answer is not stored', async () => {
    const cache = new MemoryExactCache(10_000, 2_000);
    for (let i = 0; i < 200; i++) {
      await cache.put({ tenantId: 't', alias: 'a', digest: `d${i}` }, answer(`answer ${i} `.repeat(20)), 60_000);
      expect(cache.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(await cache.get({ tenantId: 't', alias: 'a', digest: 'd199' })).not.toBeNull();
    expect(await cache.get({ tenantId: 't', alias: 'a', digest: 'd0' })).toBeNull();
    const big = answer('x'.repeat(3_000));
    expect(storedBytes(big)).toBeGreaterThan(2_000);
    await cache.put({ tenantId: 't', alias: 'a', digest: 'big' }, big, 60_000);
    expect(await cache.get({ tenantId: 't', alias: 'a', digest: 'big' })).toBeNull();
  });

  test('purge filters combine, and other tenants\' entries stay', async () => {
    let now = 0;
    const cache = new MemoryExactCache(1_000_000, 100_000, () => now);
    await cache.put({ tenantId: 'acme', alias: 'chat', digest: 'old' }, answer('1'), 600_000);
    now = 10_000;
    await cache.put({ tenantId: 'acme', alias: 'chat', digest: 'new' }, answer('2'), 600_000);
    await cache.put({ tenantId: 'acme', alias: 'other', digest: 'x' }, answer('3'), 600_000);
    await cache.put({ tenantId: 'globex', alias: 'chat', digest: 'old' }, answer('4'), 600_000);
    expect(await cache.purge({ tenantId: 'acme', alias: 'chat', storedBefore: 5_000 })).toBe(1);
    expect(await cache.get({ tenantId: 'acme', alias: 'chat', digest: 'new' })).not.toBeNull();
    expect(await cache.purge({ tenantId: null, alias: 'chat', storedBefore: null })).toBe(2);
    expect(await cache.get({ tenantId: 'acme', alias: 'other', digest: 'x' })).not.toBeNull();
  });
});

describe('in-memory idempotency store', () => {
  test('one owner per key; a different fingerprint is a mismatch; only the owner settles', async () => {
    const store = new MemoryIdempotencyStore(100_000, 50_000);
    expect(await store.claim('s', 'f1', 'o1', 1_000)).toEqual({ kind: 'owner' });
    expect(await store.claim('s', 'f1', 'o2', 1_000)).toEqual({ kind: 'pending' });
    expect(await store.claim('s', 'f2', 'o2', 1_000)).toEqual({ kind: 'mismatch' });
    await store.settle('s', 'o2', answer('not mine'), 60_000);
    expect(await store.claim('s', 'f1', 'o3', 1_000)).toEqual({ kind: 'pending' });
    await store.settle('s', 'o1', answer('mine'), 60_000);
    expect(await store.claim('s', 'f1', 'o3', 1_000)).toMatchObject({ kind: 'completed', answer: { response: { choices: [{ text: 'mine' }] } } });
    expect(await store.claim('t', 'f1', 'o4', 1_000)).toEqual({ kind: 'owner' });
    await store.abandon('t', 'o4');
    expect(await store.claim('t', 'f1', 'o5', 1_000)).toEqual({ kind: 'owner' });
  });

  test('its byte bound holds', async () => {
    const store = new MemoryIdempotencyStore(20_000, 10_000);
    for (let i = 0; i < 100; i++) {
      await store.claim(`s${i}`, 'f', `o${i}`, 60_000);
      await store.settle(`s${i}`, `o${i}`, answer('y'.repeat(1_000)), 60_000);
      expect(store.bytes).toBeLessThanOrEqual(20_000);
    }
  });
});

describe('exact cache key', () => {
  test('ignores stream framing and key order, and changes with the alias version and the content', () => {
    const base = exactCacheDigest(3, request());
    expect(exactCacheDigest(3, request({ stream: true, includeUsage: true }))).toBe(base);
    const reordered = JSON.parse(JSON.stringify(request()), (_k, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v));
    expect(exactCacheDigest(3, reordered)).toBe(base);
    expect(exactCacheDigest(4, request())).not.toBe(base);
    expect(exactCacheDigest(3, request({ temperature: 0.3 }))).not.toBe(base);
    expect(exactCacheDigest(3, request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello!' }] }] }))).not.toBe(base);
  });
});

describe('answer capture', () => {
  test('keeps what the client received, and gives up past its bound or without a finish', () => {
    const identity = { id: 'chatcmpl-1', created: 1, model: 'chat' };
    const capture = new AnswerCapture(openAiClientFormat.streamEncoder(identity, request({ stream: true })), 1_000);
    capture.encode({ type: 'text', choice: 0, text: 'Hel' });
    capture.encode({ type: 'text', choice: 0, text: 'lo' });
    capture.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_1', name: 'f', arguments: '{"a"' });
    capture.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: ':1}' });
    expect(capture.response(null)).toBeNull(); // no finish yet
    capture.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' });
    expect(capture.response('p1')).toEqual({
      providerRequestId: 'p1', usage: null,
      choices: [{ index: 0, text: 'Hello', toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }], stopReason: 'tool_calls', reasoning: [], logprobs: null }],
    });
    // reasoning blocks keep their signatures (a replayed thinking turn must be echoable), logprobs are kept
    const thinking = new AnswerCapture(openAiClientFormat.streamEncoder(identity, request({ stream: true })), 1_000);
    thinking.encode({ type: 'reasoning', choice: 0, part: 0, text: 'Let me ' });
    thinking.encode({ type: 'reasoning', choice: 0, part: 0, text: 'think.' });
    thinking.encode({ type: 'reasoning_signature', choice: 0, part: 0, signature: 'sig-1' });
    thinking.encode({ type: 'reasoning_redacted', choice: 0, part: 1, data: 'opaque' });
    thinking.encode({ type: 'text', choice: 0, text: 'Yes' });
    thinking.encode({ type: 'logprobs', choice: 0, content: [{ token: 'Yes', logprob: -0.1, bytes: null, topLogprobs: [] }] });
    thinking.encode({ type: 'finish', choice: 0, stopReason: 'stop' });
    expect(thinking.response(null)?.choices[0]).toEqual({
      index: 0, text: 'Yes', toolCalls: [], stopReason: 'stop',
      reasoning: [{ type: 'thinking', text: 'Let me think.', signature: 'sig-1' }, { type: 'redacted_thinking', data: 'opaque' }],
      logprobs: [{ token: 'Yes', logprob: -0.1, bytes: null, topLogprobs: [] }],
    });
    // the stop sequence that matched is kept, so a replay says it too
    const stopped = new AnswerCapture(openAiClientFormat.streamEncoder(identity, request({ stream: true })), 1_000);
    stopped.encode({ type: 'text', choice: 0, text: 'One, two, ' });
    stopped.encode({ type: 'finish', choice: 0, stopReason: 'stop', stopSequence: 'three' });
    expect(stopped.response(null)?.choices[0]).toMatchObject({ stopReason: 'stop', stopSequence: 'three' });
    const small = new AnswerCapture(openAiClientFormat.streamEncoder(identity, request({ stream: true })), 4);
    expect(small.encode({ type: 'text', choice: 0, text: 'too long' })).toContain('too long'); // the stream itself is untouched
    small.encode({ type: 'finish', choice: 0, stopReason: 'stop' });
    expect(small.response(null)).toBeNull();
  });
});

describe('cache settings', () => {
  test('defaults, overrides and refusals', () => {
    expect(readCacheOverrides({})).toEqual({});
    expect(DEFAULT_CACHE_KNOBS).toMatchObject({ exactCacheTtlMs: 3_600_000, idempotencyRetentionMs: 600_000, exactCacheEnabled: true });
    expect(readCacheOverrides({ SWITCHYARD_CACHE: 'off', SWITCHYARD_CACHE_TTL_SECONDS: '60', SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS: '5', SWITCHYARD_CACHE_MAX_BYTES: '1000' }))
      .toEqual({ exactCacheEnabled: false, exactCacheTtlMs: 60_000, idempotencyRetentionMs: 5_000, exactCacheMaxBytes: 1000 });
    expect(() => readCacheOverrides({ SWITCHYARD_CACHE_TTL_SECONDS: '0' })).toThrow('SWITCHYARD_CACHE_TTL_SECONDS must be a positive integer');
    expect(() => readCacheOverrides({ SWITCHYARD_CACHE: 'maybe' })).toThrow('SWITCHYARD_CACHE must be on or off');
    expect(() => readCacheOverrides({ SWITCHYARD_REDIS_NAMESPACE: 'a:b' })).toThrow('SWITCHYARD_REDIS_NAMESPACE');
  });

  test('purge ages: durations and instants', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    expect(purgeCutoff('90', now)).toBe(now - 90_000);
    expect(purgeCutoff('15m', now)).toBe(now - 900_000);
    expect(purgeCutoff('2h', now)).toBe(now - 7_200_000);
    expect(purgeCutoff('2026-01-01T00:00:00Z', now)).toBe(Date.UTC(2026, 0, 1));
    expect(purgeCutoff('yesterday', now)).toBeNull();
    expect(purgeCutoff('-5m', now)).toBeNull();
  });
});

describe('alias opt-out in the YAML', () => {
  const yaml = (policy: string) => `
providers:
  - { id: p1, type: mock }
deployments:
  - { id: d1, provider: p1, model: m, capabilities: [chat], contextWindow: 1000, maxOutputTokens: 100, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - name: chat
    routes: [{ deployment: d1 }]
    ${policy}
`;
  const policyOf = (text: string) => parseGatewayConfig(text).aliases[0].policy;

  test('only `cache: false` is written, so an alias without it reads as before', () => {
    expect(policyOf(yaml('policy: { cache: false }')).cache).toBe(false);
    expect('cache' in policyOf(yaml('policy: { cache: true }'))).toBe(false);
    expect('cache' in policyOf(yaml(''))).toBe(false);
    expect(() => parseGatewayConfig(yaml('policy: { cache: "off" }'))).toThrow(ConfigValidationError);
    expect(() => parseGatewayConfig(yaml('policy: { cache: "off" }'))).toThrow(/policy\.cache: must be true or false/);
  });

  test('the alias decider refuses anything but false', () => {
    const definition = { strategy: 'priority' as const, routes: [{ deploymentId: 'd1', priority: 0, weight: 1 }], visibility: 'public' as const,
      policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [], cache: true as unknown as false } };
    expect(aliasDefinitionProblem('chat', definition)).toContain('policy.cache');
    expect(aliasDefinitionProblem('chat', { ...definition, policy: { ...definition.policy, cache: false } })).toBeNull();
  });
});
