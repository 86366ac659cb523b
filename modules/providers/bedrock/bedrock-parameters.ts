import type { ChatRequest } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { ParameterTable } from '../parameters/parameter-table.js';

/** Anthropic's Claude models on Bedrock (`anthropic.claude-…`, or a cross-region profile `us.anthropic.claude-…`). */
export function isClaudeOnBedrock(deployment: ResolvedDeployment): boolean {
  return /(^|\.)anthropic\.claude/.test(deployment.model);
}

const claudeOnly = (_request: ChatRequest, deployment: ResolvedDeployment) => isClaudeOnBedrock(deployment);

/**
 * Bedrock Converse. Model-specific knobs travel in `additionalModelRequestFields`, which only Claude models
 * are known to accept for `top_k` and `thinking`; prompt caching is `cachePoint` blocks; attribution goes in
 * `requestMetadata` (it reaches invocation logs, never the model).
 */
export const BEDROCK_PARAMETERS: ParameterTable = Object.freeze({
  frequency_penalty: { handling: 'refuse', wire: null, note: 'Converse has no penalties' },
  presence_penalty: { handling: 'refuse', wire: null, note: 'Converse has no penalties' },
  logit_bias: { handling: 'refuse', wire: null, note: 'Converse has no logit bias' },
  logprobs: { handling: 'refuse', wire: null, note: 'Converse returns no log probabilities' },
  top_logprobs: { handling: 'refuse', wire: null, note: 'Converse returns no log probabilities' },
  seed: { handling: 'refuse', wire: null, note: 'Converse has no seed' },
  top_k: { handling: 'translate', wire: 'additionalModelRequestFields.top_k', note: 'Claude models only', honours: claudeOnly },
  reasoning_effort: {
    handling: 'translate', wire: 'additionalModelRequestFields.thinking.budget_tokens',
    note: 'Claude models only; budgets as for Anthropic; reasoningContent comes back with its signature; a tool-result continuation whose assistant turn lacks its signed thinking goes without thinking',
    honours: (request, deployment) =>
      isClaudeOnBedrock(deployment) && (request.reasoning?.budgetTokens != null || request.maxOutputTokens === null || request.maxOutputTokens >= 2048),
  },
  verbosity: { handling: 'refuse', wire: null, note: 'Converse has no verbosity control' },
  service_tier: { handling: 'refuse', wire: null, note: 'Converse service tiers are not mapped' },
  parallel_tool_calls: { handling: 'refuse', wire: null, note: 'Converse cannot limit tool calls per turn' },
  response_format: { handling: 'refuse', wire: null, note: 'Converse has no JSON mode' },
  stop: { handling: 'translate', wire: 'inferenceConfig.stopSequences', note: '' },
  n: { handling: 'refuse', wire: null, note: 'one answer per request' },
  user: { handling: 'translate', wire: 'requestMetadata.user', note: 'attribution in invocation logs' },
  metadata: { handling: 'translate', wire: 'requestMetadata', note: 'at most 16 pairs' },
  safety_identifier: { handling: 'translate', wire: 'requestMetadata.safety_identifier', note: 'attribution in invocation logs' },
  prompt_cache_key: { handling: 'refuse', wire: null, note: 'Bedrock caches at cachePoint blocks, not by key' },
  prompt_cache_retention: { handling: 'refuse', wire: null, note: 'Bedrock cache lifetimes are set per cachePoint, not per request' },
  store: { handling: 'refuse', wire: null, note: 'Bedrock does not store completions' },
  modalities: { handling: 'refuse', wire: null, note: 'text output only' },
  prediction: { handling: 'refuse', wire: null, note: 'Converse has no predicted outputs' },
  cache_control: { handling: 'translate', wire: 'cachePoint', note: 'a cachePoint block after each marked system block, message block and tool' },
  eager_input_streaming: { handling: 'translate', wire: null, note: 'ConverseStream always streams tool input as it is produced' },
  'tools[].function.strict': { handling: 'refuse', wire: null, note: 'Converse tool specs have no strict mode' },
  'anthropic-beta': {
    handling: 'translate', wire: 'additionalModelRequestFields.anthropic_beta',
    note: 'Claude models only; a list of names, as Claude on Bedrock takes betas in the body rather than a header', honours: claudeOnly,
  },
});
