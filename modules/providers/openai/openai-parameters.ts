import type { ParameterTable } from '../parameters/parameter-table.js';

/** OpenAI's processing tiers; Anthropic's `standard_only` has no OpenAI meaning. */
const OPENAI_TIERS = new Set(['auto', 'default', 'flex', 'priority', 'scale']);

/**
 * OpenAI Chat Completions: the client format the table is named after, so almost everything passes
 * through under its own name. Anthropic-only parameters are translated or refused.
 */
export const OPENAI_PARAMETERS: ParameterTable = Object.freeze({
  frequency_penalty: { handling: 'pass', wire: 'frequency_penalty', note: '' },
  presence_penalty: { handling: 'pass', wire: 'presence_penalty', note: '' },
  logit_bias: { handling: 'pass', wire: 'logit_bias', note: '' },
  logprobs: { handling: 'pass', wire: 'logprobs', note: 'returned as choices[].logprobs' },
  top_logprobs: { handling: 'pass', wire: 'top_logprobs', note: '' },
  seed: { handling: 'pass', wire: 'seed', note: '' },
  top_k: { handling: 'refuse', wire: null, note: 'OpenAI has no top-k sampling' },
  reasoning_effort: { handling: 'translate', wire: 'reasoning_effort', note: 'an Anthropic thinking budget becomes the effort band it falls in' },
  verbosity: { handling: 'pass', wire: 'verbosity', note: '' },
  service_tier: { handling: 'pass', wire: 'service_tier', note: 'auto, default, flex, priority, scale', honours: (r) => r.serviceTier === null || OPENAI_TIERS.has(r.serviceTier) },
  parallel_tool_calls: { handling: 'pass', wire: 'parallel_tool_calls', note: '' },
  response_format: { handling: 'pass', wire: 'response_format', note: '' },
  stop: { handling: 'pass', wire: 'stop', note: '' },
  n: { handling: 'pass', wire: 'n', note: 'routes need the n capability' },
  user: { handling: 'pass', wire: 'user', note: '' },
  metadata: { handling: 'pass', wire: 'metadata', note: '' },
  safety_identifier: { handling: 'pass', wire: 'safety_identifier', note: '' },
  prompt_cache_key: { handling: 'pass', wire: 'prompt_cache_key', note: '' },
  prompt_cache_retention: { handling: 'pass', wire: 'prompt_cache_retention', note: 'in_memory (the default) or 24h' },
  store: { handling: 'pass', wire: 'store', note: '' },
  modalities: { handling: 'pass', wire: 'modalities', note: 'audio output needs the audio capability' },
  prediction: { handling: 'pass', wire: 'prediction', note: '' },
  cache_control: { handling: 'translate', wire: null, note: 'OpenAI caches prompt prefixes automatically; breakpoints are not needed and cached tokens are billed at the cached price' },
  eager_input_streaming: { handling: 'translate', wire: null, note: 'OpenAI always streams tool arguments as they are produced' },
  'tools[].function.strict': { handling: 'pass', wire: 'tools[].function.strict', note: 'structured outputs for function arguments' },
  'anthropic-beta': { handling: 'refuse', wire: null, note: 'an Anthropic beta feature has no meaning on an OpenAI-wire model' },
});

/**
 * Self-hosted OpenAI-compatible servers (vLLM, Ollama, TGI) and the mock: OpenAI's table, plus `top_k`,
 * which these servers accept as an extra sampling parameter. OpenAI-platform-only features (stored
 * completions, prompt-cache routing, service tiers, predicted outputs) do not exist there.
 */
export const OPENAI_COMPATIBLE_PARAMETERS: ParameterTable = Object.freeze(Object.assign({}, OPENAI_PARAMETERS, {
  top_k: { handling: 'pass', wire: 'top_k', note: 'vLLM, Ollama and TGI sample with top_k' },
  service_tier: { handling: 'refuse', wire: null, note: 'self-hosted servers have no service tiers' },
  store: { handling: 'refuse', wire: null, note: 'self-hosted servers do not store completions' },
  prompt_cache_key: { handling: 'refuse', wire: null, note: 'self-hosted servers have no prompt-cache routing key' },
  prompt_cache_retention: { handling: 'refuse', wire: null, note: 'self-hosted servers have no extended prompt-cache retention' },
  prediction: { handling: 'refuse', wire: null, note: 'self-hosted servers have no predicted outputs' },
  safety_identifier: { handling: 'refuse', wire: null, note: 'self-hosted servers do no abuse monitoring' },
  // The server speaks OpenAI's wire, so the flag keeps its meaning there; whether it constrains decoding is the server's.
  'tools[].function.strict': { handling: 'pass', wire: 'tools[].function.strict', note: 'sent as is; whether arguments are constrained to the schema depends on the server' },
}));

/** Azure OpenAI: the OpenAI table, without OpenAI-platform-only features. */
export const AZURE_OPENAI_PARAMETERS: ParameterTable = Object.freeze(Object.assign({}, OPENAI_PARAMETERS, {
  store: { handling: 'pass', wire: 'store', note: 'Azure stored completions' },
  prompt_cache_key: { handling: 'refuse', wire: null, note: 'Azure OpenAI has no prompt-cache routing key' },
  prompt_cache_retention: { handling: 'refuse', wire: null, note: 'Azure OpenAI has no extended prompt-cache retention' },
  service_tier: { handling: 'refuse', wire: null, note: 'Azure has no service tiers in Chat Completions (deployment types instead)' },
  prediction: { handling: 'pass', wire: 'prediction', note: '' },
}));
