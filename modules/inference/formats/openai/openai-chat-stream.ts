import type { TokenUsage } from '../../../../events/request-events.js';
import type { StreamEvent, TokenLogprob } from '../../../canonical/chat-response.js';
import { logprobsToOpenAi, usageToOpenAi } from '../../../providers/openai/openai-usage.js';
import type { GatewayError } from '../../../canonical/gateway-error.js';
import type { ClientStreamEncoder } from '../client-stream-encoder.js';
import { openAiErrorBody } from './openai-error-envelope.js';
import type { ResponseIdentity } from '../client-format.js';

/**
 * Canonical stream events → OpenAI chat.completion.chunk frames. Usage is held back and sent only if
 * the client asked for it (stream_options.include_usage), after the last choice chunk.
 */
export class OpenAiChatStreamEncoder implements ClientStreamEncoder {
  readonly contentType = 'text/event-stream; charset=utf-8';
  private readonly opened = new Set<number>();
  private readonly prefix: string;

  constructor(
    private readonly identity: ResponseIdentity,
    private readonly includeUsage: boolean,
  ) {
    this.prefix = `{"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${identity.created},"model":${JSON.stringify(identity.model)},"system_fingerprint":null,"choices":`;
  }

  encode(event: StreamEvent): string {
    switch (event.type) {
      case 'text':
        return this.open(event.choice) + this.frame(event.choice, { content: event.text }, null);
      case 'reasoning':
        // DeepSeek/vLLM-style `reasoning_content` deltas: what OpenAI-compatible clients read thinking from.
        return event.text ? this.open(event.choice) + this.frame(event.choice, { reasoning_content: event.text }, null) : '';
      case 'reasoning_signature':
      case 'reasoning_redacted':
        return ''; // Chat Completions has no place for them; the thinking text already went out
      case 'logprobs':
        return this.open(event.choice) + this.frame(event.choice, {}, null, event.content);
      case 'tool_call': {
        const call: Record<string, unknown> = { index: event.index };
        if (event.id !== null) {
          call.id = event.id;
          call.type = 'function';
        }
        const fn: Record<string, string> = { arguments: event.arguments };
        if (event.name !== null) fn.name = event.name;
        call.function = fn;
        return this.open(event.choice) + this.frame(event.choice, { tool_calls: [call] }, null);
      }
      case 'finish':
        return this.open(event.choice) + this.frame(event.choice, {}, event.stopReason);
      case 'usage':
      case 'prompt_usage':
        return '';
    }
  }

  finish(usage: TokenUsage): string {
    const usageFrame = this.includeUsage ? `data: ${this.prefix}[],"usage":${JSON.stringify(usageToOpenAi(usage))}}\n\n` : '';
    return `${usageFrame}data: [DONE]\n\n`;
  }

  error(error: GatewayError): string {
    return `data: ${JSON.stringify(openAiErrorBody(error))}\n\n`;
  }

  private open(choice: number): string {
    if (this.opened.has(choice)) return '';
    this.opened.add(choice);
    return this.frame(choice, { role: 'assistant', content: '' }, null);
  }

  private frame(choice: number, delta: Record<string, unknown>, finishReason: string | null, logprobs: TokenLogprob[] | null = null): string {
    const lp = logprobs ? JSON.stringify({ content: logprobsToOpenAi(logprobs), refusal: null }) : 'null';
    return `data: ${this.prefix}[{"index":${choice},"delta":${JSON.stringify(delta)},"finish_reason":${JSON.stringify(finishReason)},"logprobs":${lp}}]}\n\n`;
  }
}
