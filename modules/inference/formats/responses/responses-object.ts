import type { TokenUsage } from '../../../../events/index.js';
import { type ChatRequest, clientToolCallId, type StopReason, type ToolCall } from '../../../canonical/index.js';
import type { ResponseIdentity } from '../client-format.js';
import { echoOf } from './responses-echo.js';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface MessageItem {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: OutputTextPart[];
}

export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export type OutputItem = MessageItem | FunctionCallItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The part of a response id after its `resp_` prefix: item ids reuse it, so they are unique per response. */
export const idStem = (identity: ResponseIdentity): string => identity.id.replace(/^resp_/, '');
export const messageItemId = (identity: ResponseIdentity, index: number): string => `msg_${idStem(identity)}_${index}`;
export const functionCallItemId = (identity: ResponseIdentity, index: number): string => `fc_${idStem(identity)}_${index}`;

export function outputText(text: string): OutputTextPart {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(identity: ResponseIdentity, index: number, call: ToolCall, status: FunctionCallItem['status']): FunctionCallItem {
  return { type: 'function_call', id: functionCallItemId(identity, index), call_id: clientToolCallId(call.id, call.signature), name: call.name, arguments: call.arguments, status };
}

export function usageToResponses(usage: TokenUsage): ResponsesUsage {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cachedInput },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: usage.input + usage.output,
  };
}

/** A stop the Responses API reports as `incomplete` (the answer was cut short), or null for a complete one. */
export function incompleteReason(stopReason: StopReason): 'max_output_tokens' | 'content_filter' | null {
  if (stopReason === 'length') return 'max_output_tokens';
  if (stopReason === 'content_filter') return 'content_filter';
  return null;
}

export interface ResponseState {
  status: ResponseStatus;
  output: OutputItem[];
  usage: TokenUsage | null;
  incomplete: 'max_output_tokens' | 'content_filter' | null;
  error: { code: string; message: string } | null;
}

/**
 * The `response` object, as the buffered answer and the stream's lifecycle events carry it: the
 * request's settings echoed back (defaults filled in, as the API reports them), the output items and
 * usage. Responses are never stored here, so `store` is always false.
 */
export function responseObject(identity: ResponseIdentity, request: ChatRequest, state: ResponseState): Record<string, unknown> {
  const echo = echoOf(request);
  const finished = state.status === 'completed' || state.status === 'incomplete';
  return {
    id: identity.id,
    object: 'response',
    created_at: identity.created,
    status: state.status,
    completed_at: finished ? Math.floor(Date.now() / 1000) : null,
    background: false,
    error: state.error,
    incomplete_details: state.incomplete ? { reason: state.incomplete } : null,
    instructions: echo.instructions,
    max_output_tokens: request.maxOutputTokens,
    max_tool_calls: null,
    model: identity.model,
    output: state.output,
    parallel_tool_calls: request.parallelToolCalls ?? true,
    previous_response_id: null,
    prompt_cache_key: request.promptCacheKey,
    reasoning: { effort: null, summary: null },
    safety_identifier: echo.safetyIdentifier,
    service_tier: request.serviceTier === null || request.serviceTier === 'auto' ? 'default' : request.serviceTier,
    store: false,
    temperature: request.temperature ?? 1,
    text: { format: echo.textFormat, verbosity: request.verbosity ?? 'medium' },
    tool_choice: echo.toolChoice,
    tools: echo.tools,
    top_logprobs: 0,
    top_p: request.topP ?? 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    truncation: 'disabled',
    usage: state.usage ? usageToResponses(state.usage) : null,
    user: request.user,
    metadata: request.metadata ?? {},
  };
}
