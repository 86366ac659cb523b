import type { TokenUsage } from '../../../../events/index.js';
import { clientToolCallId, type GatewayError, type RelayedStreamEvent, type TokenLogprob } from '../../../canonical/index.js';
import { logprobsToOpenAi, usageToOpenAi } from '../../../providers/index.js';
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
  /** Thinking text per (choice, part), to send whole with its signature. */
  private readonly thinking = new Map<string, string>();
  private readonly prefix: string;

  constructor(
    private readonly identity: ResponseIdentity,
    private readonly includeUsage: boolean,
  ) {
    this.prefix = `{"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${identity.created},"model":${JSON.stringify(identity.model)},"system_fingerprint":null,"choices":`;
  }

  encode(event: RelayedStreamEvent): string {
    switch (event.type) {
      case 'text':
        return this.open(event.choice) + this.frame(event.choice, { content: event.text }, null);
      case 'reasoning':
        // DeepSeek/vLLM-style `reasoning_content` deltas: what OpenAI-compatible clients read thinking from.
        if (!event.text) return '';
        this.thinking.set(key(event), (this.thinking.get(key(event)) ?? '') + event.text);
        return this.open(event.choice) + this.frame(event.choice, { reasoning_content: event.text }, null);
      case 'reasoning_signature': {
        // Once a thinking block is signed it goes out whole as a `thinking_blocks` delta (LiteLLM's field), so a
        // client can send it back and an Anthropic or Bedrock route can verify it.
        const block = { type: 'thinking', thinking: this.thinking.get(key(event)) ?? '', signature: event.signature };
        return this.open(event.choice) + this.frame(event.choice, { thinking_blocks: [block] }, null);
      }
      case 'reasoning_redacted':
        return this.open(event.choice) + this.frame(event.choice, { thinking_blocks: [{ type: 'redacted_thinking', data: event.data }] }, null);
      case 'logprobs':
        return this.open(event.choice) + this.frame(event.choice, {}, null, event.content);
      case 'tool_call': {
        const call: Record<string, unknown> = { index: event.index };
        if (event.id !== null) {
          call.id = clientToolCallId(event.id, event.signature);
          call.type = 'function';
        }
        const fn: Record<string, string> = { arguments: event.arguments };
        if (event.name !== null) fn.name = event.name;
        call.function = fn;
        return this.open(event.choice) + this.frame(event.choice, { tool_calls: [call] }, null);
      }
      case 'finish':
        return this.open(event.choice) + this.frame(event.choice, {}, event.stopReason);
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

const key = (event: { choice: number; part: number }) => `${event.choice}:${event.part}`;
