import { type ChatChoice, type ChatResponse, ProviderError, type TokenLogprob, type ToolCall } from '../../canonical/index.js';
import { plausibleRequestId, providerText } from '../upstream-errors.js';
import { stopReasonFromGemini, usageFromGemini } from './gemini-usage.js';
import type { GeminiCandidate, GeminiLogprobsResult, GeminiPart, GeminiResponse } from './gemini-wire.js';

/**
 * A buffered `generateContent` answer → canonical response. A prompt Gemini refused to answer
 * (`promptFeedback.blockReason`, no candidates) is a content-policy failure, not an empty answer.
 */
export function fromGeminiResponse(body: unknown): ChatResponse {
  const response = body as GeminiResponse;
  if (!response || typeof response !== 'object' || Array.isArray(response)) {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not a generateContent response');
  }
  const blocked = promptBlock(response);
  if (blocked) throw blocked;
  if (!Array.isArray(response.candidates) || response.candidates.length === 0) {
    throw new ProviderError('malformed_response', 'the provider returned no candidates');
  }
  return {
    providerRequestId: typeof response.responseId === 'string' && response.responseId ? response.responseId : null,
    choices: response.candidates.map((candidate, position) => choiceOf(candidate, position)),
    usage: response.usageMetadata ? usageFromGemini(response.usageMetadata) : null,
  };
}

/** The content-policy error for a prompt Gemini blocked, or null. */
export function promptBlock(response: GeminiResponse): ProviderError | null {
  const reason = response.promptFeedback?.blockReason;
  if (!reason || (Array.isArray(response.candidates) && response.candidates.length > 0)) return null;
  const responseId = typeof response.responseId === 'string' ? response.responseId : null;
  return new ProviderError('content_policy', 'the provider blocked the prompt', null, null, {
    providerRequestId: plausibleRequestId(responseId) ? responseId : null,
    providerMessage: providerText(`block reason ${reason}`),
  });
}

function choiceOf(candidate: GeminiCandidate, position: number): ChatChoice {
  let text = '';
  let thought = '';
  const toolCalls: ToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    const visible = visibleText(part);
    if (visible !== null) text += visible;
    thought += thoughtText(part) ?? '';
    const call = functionCallOf(part, toolCalls.length);
    if (call) toolCalls.push(call);
  }
  return {
    index: typeof candidate.index === 'number' ? candidate.index : position,
    text,
    toolCalls,
    stopReason: stopReasonFromGemini(candidate.finishReason, toolCalls.length > 0),
    reasoning: thought ? [{ type: 'thinking', text: thought, signature: null }] : [],
    logprobs: candidate.logprobsResult ? logprobsFromGemini(candidate.logprobsResult) : null,
  };
}

/** Answer text, or null for parts that are not (thought summaries are the model's notes, not its answer). */
/** A thought-summary part (`thought: true`, sent when includeThoughts is on). */
export function thoughtText(part: GeminiPart): string | null {
  return 'text' in part && typeof part.text === 'string' && part.thought === true && part.text.length > 0 ? part.text : null;
}

/** logprobsResult → canonical log probabilities: chosen tokens with their top alternatives, position by position. */
export function logprobsFromGemini(result: GeminiLogprobsResult): TokenLogprob[] {
  return (result.chosenCandidates ?? []).map((chosen, i) => ({
    token: String(chosen.token ?? ''),
    logprob: Number(chosen.logProbability ?? 0),
    bytes: null,
    topLogprobs: (result.topCandidates?.[i]?.candidates ?? []).map((top) => ({ token: String(top.token ?? ''), logprob: Number(top.logProbability ?? 0), bytes: null })),
  }));
}

export function visibleText(part: GeminiPart): string | null {
  if (!('text' in part) || typeof part.text !== 'string' || part.thought === true) return null;
  return part.text;
}

/**
 * A `functionCall` part → canonical tool call. Gemini's calls carry no id (newer models sometimes do);
 * the gateway names them `call_<n>` by position in the answer, so the same answer always yields the same
 * ids and a later tool result can be matched back to the function by name. The part's `thoughtSignature`
 * (thinking models) becomes the call's signature: Gemini 3 refuses the next turn without it.
 */
export function functionCallOf(part: GeminiPart, position: number): ToolCall | null {
  if (!('functionCall' in part) || !part.functionCall || typeof part.functionCall.name !== 'string') return null;
  const { name, args, id } = part.functionCall;
  const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature ? part.thoughtSignature : null;
  return { id: typeof id === 'string' && id ? id : `call_${position}`, name, arguments: JSON.stringify(args ?? {}), ...(signature ? { signature } : {}) };
}
