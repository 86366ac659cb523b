import { ProviderError, type StreamEvent } from '../../canonical/index.js';
import type { SseEvent } from '../streaming/sse-decoder.js';
import type { SseTranslator } from '../streaming/sse-translation.js';
import { geminiStreamError } from './gemini-errors.js';
import { functionCallOf, logprobsFromGemini, promptBlock, thoughtText, visibleText } from './gemini-response.js';
import { stopReasonFromGemini, usageFromGemini } from './gemini-usage.js';
import type { GeminiErrorBody, GeminiResponse, GeminiUsageMetadata } from './gemini-wire.js';

/** Each candidate (choice) moves answering → finished once; output after its finish is a broken stream. */
interface CandidateState {
  phase: 'answering' | 'finished';
  /** Function calls seen so far: the next call's index and `call_<n>` id. */
  calls: number;
}

/**
 * `streamGenerateContent?alt=sse` frames → canonical stream events. Every `data:` payload is a whole
 * GenerateContentResponse carrying the next piece of each candidate; a function call arrives whole, so
 * it becomes one tool_call event with its complete arguments. There is no end marker: the stream ends
 * with the body. Usage is cumulative in every frame; the last one is reported at the end, and only when
 * every candidate finished (a cut-off stream is billed on what was relayed instead).
 */
export class GeminiStreamTranslator implements SseTranslator {
  providerRequestId: string | null = null;
  readonly done = false;
  private readonly candidates = new Map<number, CandidateState>();
  private usage: GeminiUsageMetadata | null = null;

  translate(frame: SseEvent): StreamEvent[] {
    let chunk: GeminiResponse & Partial<GeminiErrorBody>;
    try {
      chunk = JSON.parse(frame.data);
    } catch {
      throw new ProviderError('malformed_response', 'the provider sent a stream frame that is not JSON');
    }
    if (!chunk || typeof chunk !== 'object' || Array.isArray(chunk)) {
      throw new ProviderError('malformed_response', 'the provider sent a stream frame that is not a response object');
    }
    if (chunk.error && typeof chunk.error === 'object') throw geminiStreamError(chunk.error, this.providerRequestId);
    const blocked = promptBlock(chunk);
    if (blocked) throw blocked;
    if (this.providerRequestId === null && typeof chunk.responseId === 'string' && chunk.responseId) this.providerRequestId = chunk.responseId;
    if (chunk.usageMetadata && typeof chunk.usageMetadata === 'object') this.usage = chunk.usageMetadata;

    const events: StreamEvent[] = [];
    for (const [position, candidate] of (Array.isArray(chunk.candidates) ? chunk.candidates : []).entries()) {
      const choice = typeof candidate.index === 'number' ? candidate.index : position;
      let state = this.candidates.get(choice);
      if (!state) {
        state = { phase: 'answering', calls: 0 };
        this.candidates.set(choice, state);
      }
      for (const part of candidate.content?.parts ?? []) {
        const text = visibleText(part);
        const call = functionCallOf(part, state.calls);
        if ((text || call) && state.phase === 'finished') {
          throw new ProviderError('malformed_response', 'the provider sent output after the candidate finished');
        }
        const thought = thoughtText(part);
        if (thought) events.push({ type: 'reasoning', choice, part: 0, text: thought });
        if (text) events.push({ type: 'text', choice, text });
        if (call) {
          events.push({ type: 'tool_call', choice, index: state.calls, id: call.id, name: call.name, arguments: call.arguments, ...(call.signature ? { signature: call.signature } : {}) });
          state.calls++;
        }
      }
      if (candidate.logprobsResult) {
        const content = logprobsFromGemini(candidate.logprobsResult);
        if (content.length) events.push({ type: 'logprobs', choice, content });
      }
      if (candidate.finishReason && state.phase === 'answering') {
        state.phase = 'finished';
        events.push({ type: 'finish', choice, stopReason: stopReasonFromGemini(candidate.finishReason, state.calls > 0) });
      }
    }
    return events;
  }

  end(): StreamEvent[] {
    const finished = this.candidates.size > 0 && [...this.candidates.values()].every((state) => state.phase === 'finished');
    return finished && this.usage ? [{ type: 'usage', usage: usageFromGemini(this.usage) }] : [];
  }
}
