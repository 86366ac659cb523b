import type { TokenUsage } from '../../../../events/index.js';
import type { GatewayError, StopReason, StreamEvent } from '../../../canonical/index.js';
import { stopReasonToAnthropic, usageToAnthropic } from '../../../providers/index.js';
import type { ClientStreamEncoder } from '../client-stream-encoder.js';
import type { ResponseIdentity } from '../client-format.js';
import { anthropicErrorBody } from './anthropic-error-envelope.js';

type OpenBlock = { index: number; kind: 'text' } | { index: number; kind: 'tool'; toolIndex: number };

/**
 * Canonical stream events → Anthropic message events: message_start (+ ping), then content blocks
 * (content_block_start / content_block_delta / content_block_stop), one at a time, and finally
 * message_delta (stop reason + usage) and message_stop. The final frames are written only by
 * `finish`, after the terminal events are committed, so they carry the settled usage; message_start
 * reports zero usage because the prompt's count is only known when the provider finishes.
 */
export class AnthropicMessagesStreamEncoder implements ClientStreamEncoder {
  readonly contentType = 'text/event-stream; charset=utf-8';
  private started = false;
  private open: OpenBlock | null = null;
  private nextBlock = 0;
  /** Canonical tool-call index → content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: StopReason | null = null;

  constructor(private readonly identity: ResponseIdentity) {}

  encode(event: StreamEvent): string {
    switch (event.type) {
      case 'text': {
        let out = this.start();
        if (this.open?.kind !== 'text') out += this.close() + this.openBlock({ type: 'text', text: '' }, { kind: 'text' });
        if (event.text.length > 0) out += this.delta({ type: 'text_delta', text: event.text });
        return out;
      }
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
      const id = event.id ?? `toolu_${this.identity.id.replace(/^msg_/, '')}_${event.index}`;
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
      usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    };
    return frame('message_start', { type: 'message_start', message }) + frame('ping', { type: 'ping' });
  }

  private openBlock(contentBlock: Record<string, unknown>, block: { kind: 'text' } | { kind: 'tool'; toolIndex: number }): string {
    const index = this.nextBlock++;
    this.open = block.kind === 'text' ? { index, kind: 'text' } : { index, kind: 'tool', toolIndex: block.toolIndex };
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

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
