import type { TokenUsage } from '../../../../events/index.js';
import type { GatewayError, StreamEvent } from '../../../canonical/index.js';
import { usageToOpenAi } from '../../../providers/index.js';
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

  private frame(choice: number, delta: Record<string, unknown>, finishReason: string | null): string {
    return `data: ${this.prefix}[{"index":${choice},"delta":${JSON.stringify(delta)},"finish_reason":${JSON.stringify(finishReason)},"logprobs":null}]}\n\n`;
  }
}
