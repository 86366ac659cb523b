import { ProviderError, type StreamEvent } from '../../canonical/index.js';
import type { SseEvent } from '../streaming/sse-decoder.js';
import { anthropicStreamError } from './anthropic-errors.js';
import { matchedStopSequence, stopReasonFromAnthropic, usageFromAnthropic } from './anthropic-usage.js';
import type { AnthropicUsage } from './anthropic-wire.js';

type Phase = 'awaiting_message_start' | 'in_message' | 'stopped';

type Block =
  | { kind: 'text'; open: boolean }
  | { kind: 'tool'; open: boolean; toolIndex: number; sawInput: boolean }
  | { kind: 'thinking'; open: boolean; part: number }
  /** server tool blocks, citations…: no canonical place, not relayed. */
  | { kind: 'ignored'; open: boolean };

interface Frame {
  type?: unknown;
  index?: unknown;
  message?: { id?: unknown; usage?: AnthropicUsage | null };
  content_block?: { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown; thinking?: unknown; signature?: unknown; data?: unknown };
  delta?: { type?: unknown; text?: unknown; partial_json?: unknown; stop_reason?: unknown; stop_sequence?: unknown; thinking?: unknown; signature?: unknown };
  usage?: AnthropicUsage | null;
}

/**
 * Anthropic Messages SSE → canonical stream events, as an explicit state machine:
 *
 *   awaiting_message_start ──message_start──▶ in_message ──message_stop──▶ stopped
 *
 * Inside a message, content blocks open (content_block_start), grow (content_block_delta) and close
 * (content_block_stop) by index; a delta for a block that is not open is a protocol violation.
 * `message_delta` carries the stop reason and cumulative usage; both are emitted once, at
 * `message_stop`, so a stream cut before it is never mistaken for a complete answer. `ping` and
 * unknown event types are skipped (Anthropic's versioning policy); `event: error` inside the 200
 * stream is a ProviderError, never a clean stop.
 */
export class AnthropicStreamTranslator {
  providerRequestId: string | null = null;
  private phase: Phase = 'awaiting_message_start';
  private readonly blocks = new Map<number, Block>();
  private nextToolIndex = 0;
  private nextReasoningPart = 0;
  private stopReason: string | null = null;
  private stopSequence: string | undefined;
  private usage: AnthropicUsage | null = null;

  get done(): boolean {
    return this.phase === 'stopped';
  }

  translate(frame: SseEvent): StreamEvent[] {
    if (this.done) return [];
    let data: Frame;
    try {
      data = JSON.parse(frame.data) as Frame;
    } catch {
      if (frame.event === 'error') throw anthropicStreamError(frame.data, this.providerRequestId);
      throw new ProviderError('malformed_response', 'the provider sent a stream frame that is not JSON');
    }
    if (!data || typeof data !== 'object') throw malformed('a stream frame that is not an object');
    const type = typeof data.type === 'string' ? data.type : frame.event;
    switch (type) {
      case 'error':
        throw anthropicStreamError(frame.data, this.providerRequestId);
      case 'ping':
        return [];
      case 'message_start':
        return this.messageStart(data);
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        return this.blockDelta(data);
      case 'content_block_stop':
        return this.blockStop(data);
      case 'message_delta':
        return this.messageDelta(data);
      case 'message_stop':
        return this.messageStop();
      default:
        return []; // new event types may appear; they must not break old clients
    }
  }

  /** The body ended: without message_stop the answer was cut short. */
  end(): StreamEvent[] {
    if (!this.done) throw new ProviderError('malformed_response', 'the provider stream ended before message_stop');
    return [];
  }

  private messageStart(data: Frame): StreamEvent[] {
    if (this.phase !== 'awaiting_message_start') throw malformed('a second message_start');
    if (!data.message || typeof data.message !== 'object') throw malformed('message_start without a message');
    this.phase = 'in_message';
    if (typeof data.message.id === 'string') this.providerRequestId = data.message.id;
    if (data.message.usage && typeof data.message.usage === 'object') {
      this.usage = { ...data.message.usage };
      // The prompt's count is final here; client formats that report it at the start use it.
      const { input, cachedInput, cacheWrite } = usageFromAnthropic(this.usage);
      return [{ type: 'prompt_usage', usage: { input, cachedInput, cacheWrite } }];
    }
    return [];
  }

  private blockStart(data: Frame): StreamEvent[] {
    this.expectInMessage('content_block_start');
    const index = blockIndex(data);
    if (this.blocks.has(index)) throw malformed(`content_block_start for block ${index}, which already started`);
    const block = data.content_block ?? {};
    switch (block.type) {
      case 'text': {
        this.blocks.set(index, { kind: 'text', open: true });
        return typeof block.text === 'string' && block.text.length > 0 ? [{ type: 'text', choice: 0, text: block.text }] : [];
      }
      case 'tool_use': {
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw malformed('a tool_use block without id or name');
        const initial = isNonEmptyObject(block.input) ? JSON.stringify(block.input) : '';
        const toolIndex = this.nextToolIndex++;
        this.blocks.set(index, { kind: 'tool', open: true, toolIndex, sawInput: initial.length > 0 });
        return [{ type: 'tool_call', choice: 0, index: toolIndex, id: block.id, name: block.name, arguments: initial }];
      }
      case 'thinking': {
        const part = this.nextReasoningPart++;
        this.blocks.set(index, { kind: 'thinking', open: true, part });
        const events: StreamEvent[] = [];
        if (typeof block.thinking === 'string' && block.thinking.length > 0) events.push({ type: 'reasoning', choice: 0, part, text: block.thinking });
        if (typeof block.signature === 'string' && block.signature.length > 0) events.push({ type: 'reasoning_signature', choice: 0, part, signature: block.signature });
        return events;
      }
      case 'redacted_thinking': {
        if (typeof block.data !== 'string') throw malformed('a redacted_thinking block without data');
        const part = this.nextReasoningPart++;
        this.blocks.set(index, { kind: 'ignored', open: true });
        return [{ type: 'reasoning_redacted', choice: 0, part, data: block.data }];
      }
      default:
        this.blocks.set(index, { kind: 'ignored', open: true });
        return [];
    }
  }

  private blockDelta(data: Frame): StreamEvent[] {
    this.expectInMessage('content_block_delta');
    const block = this.openBlock(blockIndex(data), 'content_block_delta');
    const delta = data.delta ?? {};
    switch (delta.type) {
      case 'text_delta':
        if (block.kind !== 'text') throw malformed('a text_delta for a block that is not text');
        if (typeof delta.text !== 'string') throw malformed('a text_delta without text');
        return delta.text.length > 0 ? [{ type: 'text', choice: 0, text: delta.text }] : [];
      case 'input_json_delta':
        if (block.kind !== 'tool') throw malformed('an input_json_delta for a block that is not tool_use');
        if (typeof delta.partial_json !== 'string') throw malformed('an input_json_delta without partial_json');
        if (delta.partial_json.length === 0) return [];
        block.sawInput = true;
        return [{ type: 'tool_call', choice: 0, index: block.toolIndex, id: null, name: null, arguments: delta.partial_json }];
      case 'thinking_delta':
        if (block.kind !== 'thinking') throw malformed('a thinking_delta for a block that is not thinking');
        if (typeof delta.thinking !== 'string') throw malformed('a thinking_delta without thinking');
        return delta.thinking.length > 0 ? [{ type: 'reasoning', choice: 0, part: block.part, text: delta.thinking }] : [];
      case 'signature_delta':
        if (block.kind !== 'thinking') throw malformed('a signature_delta for a block that is not thinking');
        if (typeof delta.signature !== 'string') throw malformed('a signature_delta without signature');
        return [{ type: 'reasoning_signature', choice: 0, part: block.part, signature: delta.signature }];
      default:
        return []; // citations_delta and future delta types: nothing canonical to carry
    }
  }

  private blockStop(data: Frame): StreamEvent[] {
    this.expectInMessage('content_block_stop');
    const block = this.openBlock(blockIndex(data), 'content_block_stop');
    return this.close(block);
  }

  private messageDelta(data: Frame): StreamEvent[] {
    this.expectInMessage('message_delta');
    if (typeof data.delta?.stop_reason === 'string') {
      this.stopReason = data.delta.stop_reason;
      this.stopSequence = matchedStopSequence(data.delta.stop_reason, data.delta.stop_sequence);
    }
    // message_delta usage is cumulative for the whole message: overwrite what is present, never add.
    if (data.usage && typeof data.usage === 'object') {
      const merged: AnthropicUsage = { ...(this.usage ?? {}) };
      for (const [key, value] of Object.entries(data.usage)) {
        if (typeof value === 'number') (merged as Record<string, number>)[key] = value;
      }
      this.usage = merged;
    }
    return [];
  }

  private messageStop(): StreamEvent[] {
    this.expectInMessage('message_stop');
    const events: StreamEvent[] = [];
    for (const block of this.blocks.values()) if (block.open) events.push(...this.close(block));
    this.phase = 'stopped';
    const finish: StreamEvent = { type: 'finish', choice: 0, stopReason: stopReasonFromAnthropic(this.stopReason) };
    if (this.stopSequence !== undefined) finish.stopSequence = this.stopSequence;
    events.push(finish);
    if (this.usage) events.push({ type: 'usage', usage: usageFromAnthropic(this.usage) });
    return events;
  }

  private close(block: Block): StreamEvent[] {
    block.open = false;
    // A tool without arguments streams no JSON at all; canonical arguments must still be valid JSON.
    if (block.kind === 'tool' && !block.sawInput) {
      block.sawInput = true;
      return [{ type: 'tool_call', choice: 0, index: block.toolIndex, id: null, name: null, arguments: '{}' }];
    }
    return [];
  }

  private expectInMessage(event: string): void {
    if (this.phase === 'awaiting_message_start') throw malformed(`${event} before message_start`);
  }

  private openBlock(index: number, event: string): Block {
    const block = this.blocks.get(index);
    if (!block) throw malformed(`${event} for block ${index}, which never started`);
    if (!block.open) throw malformed(`${event} for block ${index}, which already stopped`);
    return block;
  }
}

function blockIndex(data: Frame): number {
  if (typeof data.index !== 'number' || !Number.isInteger(data.index) || data.index < 0) throw malformed('a content block event without an index');
  return data.index;
}

function isNonEmptyObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0;
}

function malformed(what: string): ProviderError {
  return new ProviderError('malformed_response', `the provider stream is out of order: ${what}`);
}
