import type { ParameterTable } from '../parameters/parameter-table.js';

/** Anthropic's own tiers; OpenAI's (flex, priority, scale) have no Anthropic meaning. */
const ANTHROPIC_TIERS = new Set(['auto', 'standard_only']);

/**
 * Anthropic Messages. Sampling knobs Anthropic lacks (penalties, logit bias, seed, logprobs, n) are refused;
 * reasoning becomes `thinking.budget_tokens`, the end-user id `metadata.user_id`, prompt caching its own
 * `cache_control` breakpoints.
 */
export const ANTHROPIC_PARAMETERS: ParameterTable = Object.freeze({
  frequency_penalty: { handling: 'refuse', wire: null, note: 'Anthropic has no frequency penalty' },
  presence_penalty: { handling: 'refuse', wire: null, note: 'Anthropic has no presence penalty' },
  logit_bias: { handling: 'refuse', wire: null, note: 'Anthropic has no logit bias' },
  logprobs: { handling: 'refuse', wire: null, note: 'Anthropic returns no log probabilities' },
  top_logprobs: { handling: 'refuse', wire: null, note: 'Anthropic returns no log probabilities' },
  seed: { handling: 'refuse', wire: null, note: 'Anthropic has no seed' },
  top_k: { handling: 'pass', wire: 'top_k', note: '' },
  reasoning_effort: {
    handling: 'translate', wire: 'thinking.budget_tokens',
    note: 'an effort becomes a budget (minimal 1024, low 2048, medium 8192, high 24576), shrunk to half of max_tokens; thinking comes back as thinking blocks with signatures; a tool-result continuation whose assistant turn lacks its signed thinking goes without thinking',
    // Anthropic needs budget ≥ 1024 below max_tokens: a max_tokens under 2048 leaves no room for an effort-derived budget.
    honours: (request) => request.reasoning?.budgetTokens != null || request.maxOutputTokens === null || request.maxOutputTokens >= 2048,
  },
  verbosity: { handling: 'refuse', wire: null, note: 'Anthropic has no verbosity control' },
  service_tier: {
    handling: 'pass', wire: 'service_tier', note: 'auto and standard_only only',
    honours: (request) => request.serviceTier === null || ANTHROPIC_TIERS.has(request.serviceTier),
  },
  parallel_tool_calls: { handling: 'translate', wire: 'tool_choice.disable_parallel_tool_use', note: '' },
  // Structured outputs need a current model: the operator says which deployments have it. There is no schema-less JSON mode.
  response_format: {
    handling: 'translate', wire: 'output_config.format', note: 'json_schema only, on deployments that declare the structured_outputs capability; json_object has no Anthropic equivalent',
    honours: (request, deployment) => request.responseFormat?.type === 'json_schema' && deployment.capabilities.has('structured_outputs'),
  },
  stop: { handling: 'translate', wire: 'stop_sequences', note: '' },
  n: { handling: 'refuse', wire: null, note: 'one answer per request' },
  user: { handling: 'translate', wire: 'metadata.user_id', note: '' },
  metadata: { handling: 'refuse', wire: null, note: 'Anthropic metadata holds only user_id' },
  safety_identifier: {
    handling: 'translate', wire: 'metadata.user_id', note: 'when no different user is given',
    honours: (request) => request.user === null || request.user === request.safetyIdentifier,
  },
  prompt_cache_key: { handling: 'refuse', wire: null, note: 'Anthropic caches at cache_control breakpoints, not by key' },
  prompt_cache_retention: { handling: 'refuse', wire: null, note: 'Anthropic cache lifetimes are cache_control ttl (5m or 1h), set per breakpoint' },
  store: { handling: 'refuse', wire: null, note: 'Anthropic does not store completions' },
  modalities: { handling: 'refuse', wire: null, note: 'text output only' },
  prediction: { handling: 'refuse', wire: null, note: 'Anthropic has no predicted outputs' },
  cache_control: { handling: 'pass', wire: 'cache_control', note: 'on system blocks, message blocks and tools' },
  eager_input_streaming: { handling: 'pass', wire: 'tools[].eager_input_streaming', note: '' },
  // Strict tool use needs a current model: the operator says which deployments have it.
  'tools[].function.strict': {
    handling: 'pass', wire: 'tools[].strict', note: 'on deployments that declare the strict_tools capability',
    honours: (_request, deployment) => deployment.capabilities.has('strict_tools'),
  },
  'anthropic-beta': { handling: 'pass', wire: 'anthropic-beta header', note: 'the names as the client listed them, comma-separated' },
});
