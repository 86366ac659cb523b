import type { TokenUsage } from '../../../../events/index.js';
import { clientToolCallId, type GatewayError, type StopReason, type StreamEvent } from '../../../canonical/index.js';
import { stopReasonToAnthropic, usageToAnthropic } from '../../../providers/index.js';
import type { ClientStreamEncoder } from '../client-stream-encoder.js';
import type { ResponseIdentity } from '../client-format.js';
import { anthropicErrorBody } from './anthropic-error-envelope.js';

type OpenBlock =
  | { index: number; kind: 'text' }
  | { index: number; kind: 'tool'; toolIndex: number }
  | { index: number; kind: 'thinking'; part: number };

/**
 * Canonical stream events → Anthropic message events: message_start (+ ping), then content blocks
 * (content_block_start / content_block_delta / content_block_stop), one at a time, and finally
 * message_delta (stop reason + usage) and message_stop. The final frames are written only by
 * `finish`, after the terminal events are committed, so they carry the settled usage.
 *
 * message_start carries the input count, as Anthropic's own streams do: the provider's count when the
 * provider reported it before the output (an Anthropic upstream's message_start, relayed as
 * `prompt_usage`), otherwise the gateway's admission estimate. message_delta then carries the settled
 * usage, input included, so clients that read the final frame get the provider's numbers.
 * Reasoning becomes `thinking` blocks (thinking_delta, then signature_delta) and `redacted_thinking` blocks.
 */
export class AnthropicMessagesStreamEncoder implements ClientStreamEncoder {
  readonly contentType = 'text/event-stream; charset=utf-8';
  private started = false;
  private open: OpenBlock | null = null;
  private nextBlock = 0;
  /** Canonical tool-call index → content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: StopReason | null = null;

  private prompt: Extract<StreamEvent, { type: 'prompt_usage' }>['usage'] | null = null;

  constructor(
    private readonly identity: ResponseIdentity,
    private readonly estimatedInputTokens = 0,
  ) {}

  encode(event: StreamEvent): string {
    switch (event.type) {
      case 'text': {
        let out = this.start();
        if (this.open?.kind !== 'text') out += this.close() + this.openBlock({ type: 'text', text: '' }, { kind: 'text' });
        if (event.text.length > 0) out += this.delta({ type: 'text_delta', text: event.text });
        return out;
      }
      case 'reasoning': {
        let out = this.start();
        if (!(this.open?.kind === 'thinking' && this.open.part === event.part)) {
          out += this.close() + this.openBlock({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking', part: event.part });
        }
        if (event.text.length > 0) out += this.delta({ type: 'thinking_delta', thinking: event.text });
        return out;
      }
      case 'reasoning_signature': {
        let out = this.start();
        if (!(this.open?.kind === 'thinking' && this.open.part === event.part)) {
          // A signature for a block with no text (or one already closed) still gets a thinking block to sit in.
          out += this.close() + this.openBlock({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking', part: event.part });
        }
        return out + this.delta({ type: 'signature_delta', signature: event.signature }) + this.close();
      }
      case 'reasoning_redacted':
        return this.start() + this.close() + this.openBlock({ type: 'redacted_thinking', data: event.data }, { kind: 'thinking', part: event.part }) + this.close();
      case 'logprobs':
        return ''; // the Messages API has no log probabilities; routing refused the request if they were asked for
      case 'prompt_usage':
        if (!this.started) this.prompt = event.usage;
        return '';
      case 'tool_call':
        return this.start() + this.toolCall(event);
      case 'finish':
        this.stopReason = event.stopReason;
        return this.start() + this.close();
      case 'usage':
        return ''; // the settled usage goes into message_delta at the end
    }
  }

  finish(usage: TokenUsage): string {
    const delta = { stop_reason: stopReasonToAnthropic(this.stopReason ?? 'stop'), stop_sequence: null };
    return (
      this.start() +
      this.close() +
      frame('message_delta', { type: 'message_delta', delta, usage: usageToAnthropic(usage) }) +
      frame('message_stop', { type: 'message_stop' })
    );
  }

  error(error: GatewayError): string {
    return frame('error', anthropicErrorBody(error));
  }

  private toolCall(event: Extract<StreamEvent, { type: 'tool_call' }>): string {
    const known = this.toolBlocks.get(event.index);
    if (known === undefined) {
      const id = event.id !== null ? clientToolCallId(event.id, event.signature) : `toolu_${this.identity.id.replace(/^msg_/, '')}_${event.index}`;
      let out = this.close() + this.openBlock({ type: 'tool_use', id, name: event.name ?? '', input: {} }, { kind: 'tool', toolIndex: event.index });
      if (event.arguments.length > 0) out += this.delta({ type: 'input_json_delta', partial_json: event.arguments });
      return out;
    }
    if (event.arguments.length === 0) return '';
    // Providers stream calls one after another; should one interleave, its pieces still go to its own block.
    return frame('content_block_delta', { type: 'content_block_delta', index: known, delta: { type: 'input_json_delta', partial_json: event.arguments } });
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const message = {
      id: this.identity.id,
      type: 'message',
      role: 'assistant',
      model: this.identity.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: this.startUsage(),
    };
    return frame('message_start', { type: 'message_start', message }) + frame('ping', { type: 'ping' });
  }

  /** Output is counted in message_delta only (clients take the last value they see). */
  private startUsage(): Record<string, number> {
    const usage = usageToAnthropic({ input: this.estimatedInputTokens, cachedInput: 0, cacheWrite: 0, ...this.prompt, output: 0, reasoning: 0 });
    return { input_tokens: usage.input_tokens ?? 0, cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0, cache_read_input_tokens: usage.cache_read_input_tokens ?? 0, output_tokens: 0 };
  }

  private openBlock(contentBlock: Record<string, unknown>, block: DistributiveOmit<OpenBlock, 'index'>): string {
    const index = this.nextBlock++;
    this.open = Object.assign({ index }, block); // not a spread followed by a new key (eslint.config.js)
    if (block.kind === 'tool') this.toolBlocks.set(block.toolIndex, index);
    return frame('content_block_start', { type: 'content_block_start', index, content_block: contentBlock });
  }

  private delta(delta: Record<string, unknown>): string {
    return frame('content_block_delta', { type: 'content_block_delta', index: this.open!.index, delta });
  }

  private close(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = null;
    return frame('content_block_stop', { type: 'content_block_stop', index });
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
