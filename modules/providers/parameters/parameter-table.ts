import type { ChatRequest } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';

/**
 * The request parameters whose handling differs between provider formats, named as the OpenAI client
 * format names them (the Anthropic client format renames them in its errors: see ANTHROPIC_PARAMETER_NAMES);
 * `anthropic-beta` is a request header in both client formats.
 * Parameters every provider format speaks (model, messages, max tokens, temperature, top_p, tools,
 * tool_choice, stream) are not in the tables; neither are structural limits of one provider (image URLs),
 * which its adapter checks itself.
 */
export const TABLE_PARAMETERS = [
  'frequency_penalty', 'presence_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'seed', 'top_k', 'reasoning_effort',
  'verbosity', 'service_tier', 'parallel_tool_calls', 'response_format', 'stop', 'n', 'user', 'metadata', 'safety_identifier',
  'prompt_cache_key', 'prompt_cache_retention', 'store', 'modalities', 'prediction', 'cache_control', 'eager_input_streaming',
  'tools[].function.strict', 'anthropic-beta',
] as const;

export type TableParameter = (typeof TABLE_PARAMETERS)[number];

/**
 * pass: sent under the same meaning (maybe another field name); translate: expressed in the provider's own
 * terms (a thinking budget for an effort, cachePoint blocks for cache_control); refuse: the provider has no
 * way to honour it, so a route to it is ineligible when the request asks for it.
 */
export type Handling = 'pass' | 'translate' | 'refuse';

export interface ParameterRow {
  handling: Handling;
  /** Where it goes on the provider's wire (null when refused). */
  wire: string | null;
  /** Why, or how it is translated: shown in the README's table and in tests. */
  note: string;
  /**
   * Narrows a pass/translate row for one deployment or value: returns false when this deployment cannot
   * honour this request's value (Bedrock `top_k` only for Claude models, Anthropic `service_tier` only `auto`
   * and `standard_only`).
   */
  honours?: (request: ChatRequest, deployment: ResolvedDeployment) => boolean;
}

export type ParameterTable = Readonly<Record<TableParameter, ParameterRow>>;

/** What "asked for" means per parameter: a non-default value. Defaults and neutral values never exclude a route. */
export const REQUESTED: Readonly<Record<TableParameter, (request: ChatRequest) => boolean>> = Object.freeze({
  frequency_penalty: (r) => r.frequencyPenalty !== null && r.frequencyPenalty !== 0,
  presence_penalty: (r) => r.presencePenalty !== null && r.presencePenalty !== 0,
  logit_bias: (r) => r.logitBias !== null && Object.keys(r.logitBias).length > 0,
  logprobs: (r) => r.logprobs,
  top_logprobs: (r) => r.topLogprobs !== null && r.topLogprobs > 0,
  seed: (r) => r.seed !== null,
  top_k: (r) => r.topK !== null,
  reasoning_effort: (r) => r.reasoning !== null,
  verbosity: (r) => r.verbosity !== null,
  service_tier: (r) => r.serviceTier !== null && r.serviceTier !== 'auto' && r.serviceTier !== 'default',
  parallel_tool_calls: (r) => r.parallelToolCalls === false,
  response_format: (r) => r.responseFormat !== null && r.responseFormat.type !== 'text',
  stop: (r) => r.stop.length > 0,
  n: (r) => r.n > 1,
  user: (r) => r.user !== null,
  metadata: (r) => r.metadata !== null && Object.keys(r.metadata).length > 0,
  safety_identifier: (r) => r.safetyIdentifier !== null,
  prompt_cache_key: (r) => r.promptCacheKey !== null,
  // in_memory is OpenAI's default lifetime: asking for it asks for nothing.
  prompt_cache_retention: (r) => r.promptCacheRetention !== null && r.promptCacheRetention !== 'in_memory',
  store: (r) => r.store === true,
  modalities: (r) => r.modalities !== null && r.modalities.some((m) => m !== 'text'),
  prediction: (r) => r.prediction !== null,
  cache_control: (r) => hasCacheControl(r),
  eager_input_streaming: (r) => r.tools.some((t) => t.eagerInputStreaming === true),
  // strict promises arguments that match the schema: each table says whether its format can keep that promise.
  'tools[].function.strict': (r) => r.tools.some((t) => t.strict === true),
  'anthropic-beta': (r) => r.anthropicBetas !== undefined,
});

/** The first parameter the request asks for that this table (for this deployment) cannot honour, or null. */
export function refusedParameter(table: ParameterTable, request: ChatRequest, deployment: ResolvedDeployment): TableParameter | null {
  for (const parameter of TABLE_PARAMETERS) {
    if (!REQUESTED[parameter](request)) continue;
    const row = table[parameter];
    if (row.handling === 'refuse' || row.honours?.(request, deployment) === false) return parameter;
  }
  return null;
}

/**
 * The parameters the request asks for that this table accepts without sending anything (a translate row with
 * no wire field: a hint the provider format has no field for, such as strict on Gemini or eager_input_streaming
 * where tool input always streams). They are not refused, so the route stays eligible, but nothing reaches the
 * provider: the attempt records them (AttemptFinished.unsentParameters) and the client sees them in the
 * `x-switchyard-unsent-parameters` header, so nothing is dropped without a note.
 */
export function unsentParameters(table: ParameterTable, request: ChatRequest, deployment: ResolvedDeployment): TableParameter[] {
  return TABLE_PARAMETERS.filter((parameter) => {
    const row = table[parameter];
    return REQUESTED[parameter](request) && row.handling === 'translate' && row.wire === null && row.honours?.(request, deployment) !== false;
  });
}

export function hasCacheControl(request: ChatRequest): boolean {
  if (request.tools.some((t) => t.cacheControl)) return true;
  return request.messages.some(
    (m) => m.content.some((p) => p.cacheControl) || (m.role === 'tool' && m.cacheControl) || (m.role === 'assistant' && m.toolCalls.some((c) => c.cacheControl)),
  );
}

/** How the Anthropic client format spells a table parameter (its errors name what the client sent). */
export const ANTHROPIC_PARAMETER_NAMES: Readonly<Partial<Record<TableParameter, string>>> = Object.freeze({
  reasoning_effort: 'thinking',
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
  response_format: 'output_config.format',
  'tools[].function.strict': 'tools[].strict',
});
