import type { ParameterTable } from '../parameters/parameter-table.js';

/**
 * Gemini generateContent: most sampling knobs live in `generationConfig`; reasoning is
 * `thinkingConfig.thinkingBudget` (with `includeThoughts`, so the thoughts come back as reasoning).
 */
export const GEMINI_PARAMETERS: ParameterTable = Object.freeze({
  frequency_penalty: { handling: 'translate', wire: 'generationConfig.frequencyPenalty', note: '' },
  presence_penalty: { handling: 'translate', wire: 'generationConfig.presencePenalty', note: '' },
  logit_bias: { handling: 'refuse', wire: null, note: 'Gemini has no logit bias' },
  logprobs: { handling: 'translate', wire: 'generationConfig.responseLogprobs', note: 'logprobsResult becomes choices[].logprobs' },
  top_logprobs: { handling: 'translate', wire: 'generationConfig.logprobs', note: 'at most 20 alternatives per token', honours: (r) => (r.topLogprobs ?? 0) <= 20 },
  seed: { handling: 'translate', wire: 'generationConfig.seed', note: '' },
  top_k: { handling: 'translate', wire: 'generationConfig.topK', note: '' },
  reasoning_effort: {
    handling: 'translate', wire: 'generationConfig.thinkingConfig.thinkingBudget',
    note: 'an effort becomes a budget (minimal 1024, low 2048, medium 8192, high 24576); thought summaries come back as reasoning',
  },
  verbosity: { handling: 'refuse', wire: null, note: 'Gemini has no verbosity control' },
  service_tier: { handling: 'refuse', wire: null, note: 'Gemini has no service tiers' },
  parallel_tool_calls: { handling: 'refuse', wire: null, note: 'Gemini cannot be limited to one function call per turn' },
  response_format: { handling: 'translate', wire: 'generationConfig.responseMimeType/responseSchema', note: '' },
  stop: { handling: 'translate', wire: 'generationConfig.stopSequences', note: 'at most 5', honours: (r) => r.stop.length <= 5 },
  n: { handling: 'translate', wire: 'generationConfig.candidateCount', note: 'routes need the n capability' },
  user: { handling: 'refuse', wire: null, note: 'the Gemini API has no end-user id' },
  metadata: { handling: 'refuse', wire: null, note: 'the Gemini API has no request metadata (labels are Vertex-only)' },
  safety_identifier: { handling: 'refuse', wire: null, note: 'the Gemini API has no end-user id' },
  prompt_cache_key: { handling: 'refuse', wire: null, note: 'Gemini caches implicitly or through cachedContents, not by key' },
  prompt_cache_retention: { handling: 'refuse', wire: null, note: 'Gemini\'s implicit cache lifetime is not configurable per request' },
  store: { handling: 'refuse', wire: null, note: 'Gemini does not store completions' },
  modalities: { handling: 'refuse', wire: null, note: 'text output only through this gateway' },
  prediction: { handling: 'refuse', wire: null, note: 'Gemini has no predicted outputs' },
  cache_control: { handling: 'translate', wire: null, note: 'Gemini 2.5 caches prompt prefixes implicitly; cached tokens (cachedContentTokenCount) are billed at the cached price' },
  // A latency hint that changes nothing in the answer: Gemini has no partial inputs to send earlier.
  eager_input_streaming: { handling: 'translate', wire: null, note: 'Gemini sends each function call whole the moment it is complete' },
  // Kept as a hint, as before strict had a row: Gemini has no strict flag to send, and refusing would shut the
  // OpenAI Agents SDK (strict on every tool) out of Gemini routes. The note says what is not promised.
  'tools[].function.strict': {
    handling: 'translate', wire: null,
    note: 'a hint: Gemini function declarations have no strict flag; the schema is sent in Gemini\'s subset, but arguments are not guaranteed to match it',
  },
  'anthropic-beta': { handling: 'refuse', wire: null, note: 'an Anthropic beta feature has no meaning on Gemini' },
});
