import { ProviderError, type StreamEvent } from '../../canonical/index.js';
import type { SseEvent } from '../streaming/sse-decoder.js';
import { providerText } from '../upstream-errors.js';
import { logprobsFromOpenAi, stopReasonFromOpenAi, usageFromOpenAi } from './openai-usage.js';
import type { OpenAiChunk } from './openai-wire.js';

/**
 * OpenAI chat.completion.chunk frames → canonical stream events. State: whether `[DONE]` arrived and
 * the provider's response id. An `error` object inside a 200 stream becomes a ProviderError, never a
 * clean stop; a frame that is not JSON is a malformed response.
 */
export class OpenAiStreamTranslator {
  providerRequestId: string | null = null;
  done = false;

  translate(frame: SseEvent): StreamEvent[] {
    if (frame.data === '[DONE]') {
      this.done = true;
      return [];
    }
    let chunk: OpenAiChunk & { error?: { message?: string; type?: string; code?: string } };
    try {
      chunk = JSON.parse(frame.data);
    } catch {
      throw new ProviderError('malformed_response', 'the provider sent a stream frame that is not JSON');
    }
    if (chunk.error) {
      const kind = chunk.error.type ?? chunk.error.code ?? 'error';
      const errorClass = /rate/i.test(kind) ? 'rate_limited' : /overload/i.test(kind) ? 'overloaded' : 'transient';
      throw new ProviderError(errorClass, 'the provider reported an error inside the stream', null, null, {
        providerRequestId: this.providerRequestId,
        providerMessage: providerText(chunk.error.message ?? kind),
      });
    }
    if (!Array.isArray(chunk.choices)) throw new ProviderError('malformed_response', 'the provider sent a chunk without choices');
    // Azure opens with a prompt_filter_results chunk whose id is empty; the real id comes next.
    if (this.providerRequestId === null && typeof chunk.id === 'string' && chunk.id) this.providerRequestId = chunk.id;
    const events: StreamEvent[] = [];
    for (const choice of chunk.choices) {
      const delta = choice.delta ?? {};
      // OpenAI-compatible reasoning servers stream thinking as reasoning_content (vLLM, DeepSeek) or reasoning (Ollama, OpenRouter).
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning.length > 0) events.push({ type: 'reasoning', choice: choice.index, part: 0, text: reasoning });
      if (Array.isArray(choice.logprobs?.content) && choice.logprobs.content.length > 0) {
        events.push({ type: 'logprobs', choice: choice.index, content: logprobsFromOpenAi(choice.logprobs.content) });
      }
      if (typeof delta.content === 'string' && delta.content.length > 0) {
        events.push({ type: 'text', choice: choice.index, text: delta.content });
      }
      for (const call of delta.tool_calls ?? []) {
        events.push({
          type: 'tool_call',
          choice: choice.index,
          index: call.index,
          id: call.id ?? null,
          name: call.function?.name ?? null,
          arguments: call.function?.arguments ?? '',
        });
      }
      if (choice.finish_reason) events.push({ type: 'finish', choice: choice.index, stopReason: stopReasonFromOpenAi(choice.finish_reason) });
    }
    if (chunk.usage) events.push({ type: 'usage', usage: usageFromOpenAi(chunk.usage) });
    return events;
  }
}
