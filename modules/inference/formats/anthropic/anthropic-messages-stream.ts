import type { TokenUsage } from '../../../../events/index.js';
import {
  clientToolCallId, type GatewayError, ProviderError, type PromptUsage, type RelayedStreamEvent, type StopReason, toolInputForClient,
} from '../../../canonical/index.js';
import { stopReasonToAnthropic, usageToAnthropic } from '../../../providers/index.js';
import type { ClientStreamEncoder } from '../client-stream-encoder.js';
import type { ResponseIdentity } from '../client-format.js';
import { anthropicErrorBody } from './anthropic-error-envelope.js';

type OpenBlock =
  | { index: number; kind: 'text' }
  | { index: number; kind: 'tool' }
  | { index: number; kind: 'thinking'; part: number };

/** A tool call held until it is complete: its block is written whole, with input that is a JSON object. */
interface HeldToolCall {
  toolIndex: number;
  id: string | null;
  name: string | null;
  signature: string | undefined;
  arguments: string;
}

/**
 * The most tool-call argument text held back at once. A model's tool input is bounded by its output
 * limit (128k tokens are well under 1 MiB); a provider that streams more is cut off as a malformed
 * answer rather than allowed to grow the gateway's memory.
 */
export const MAX_HELD_TOOL_ARGUMENT_CHARS = 8 * 1024 * 1024;

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
 *
 * Anthropic clients require tool `input` to be a JSON object and assemble it from the input_json_delta
 * pieces. Where the provider guarantees that its streamed arguments assemble to one (Anthropic, Bedrock,
 * Gemini: `toolArguments: 'object'` on the upstream stream), the pieces go out as they arrive, as
 * Anthropic's own streams send them. Otherwise (OpenAI Chat Completions, whose arguments are whatever
 * the model produced — and stored answers), each tool call is held until it is complete — until the next
 * text or reasoning, the finish, or the end — and written as one tool_use block: content_block_start,
 * one input_json_delta and content_block_stop, checked first: arguments that are not a JSON object
 * arrive wrapped as `{"_raw": "<text>"}`, exactly as in a buffered answer (toolInputForClient). Holding
 * also keeps the event order of Anthropic's streams when a provider interleaves the argument pieces of
 * parallel calls: one block at a time, never a delta for a block already stopped. Text and thinking are
 * never held; the first bytes (message_start) are not delayed.
 */
export class AnthropicMessagesStreamEncoder implements ClientStreamEncoder {
  readonly contentType = 'text/event-stream; charset=utf-8';
  private started = false;
  private open: OpenBlock | null = null;
  private nextBlock = 0;
  /** Whether tool calls are held until complete (see above); the relay says when the provider guarantees objects. */
  private holdToolCalls = true;
  /** Streamed through: canonical tool-call index → content block index. */
  private readonly toolBlocks = new Map<number, number>();
  /** Calls not written yet, by canonical tool-call index, in the order they opened. */
  private readonly held = new Map<number, HeldToolCall>();
  private heldChars = 0;
  /** Calls already written (a later piece of one is a malformed answer). */
  private readonly written = new Set<number>();
  private stopReason: StopReason | null = null;
  private stopSequence: string | undefined;

  private prompt: PromptUsage | null = null;

  constructor(
    private readonly identity: ResponseIdentity,
    private readonly estimatedInputTokens = 0,
  ) {}

  encode(event: RelayedStreamEvent): string {
    switch (event.type) {
      case 'text': {
        // An empty piece says nothing: it neither ends the held calls nor opens a block after them.
        if (event.text.length === 0 && this.held.size > 0) return this.start();
        let out = this.start() + this.writeHeld();
        if (this.open?.kind !== 'text') out += this.close() + this.openBlock({ type: 'text', text: '' }, { kind: 'text' });
        if (event.text.length > 0) out += this.delta({ type: 'text_delta', text: event.text });
        return out;
      }
      case 'reasoning': {
        let out = this.start() + this.writeHeld();
        if (!(this.open?.kind === 'thinking' && this.open.part === event.part)) {
          out += this.close() + this.openBlock({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking', part: event.part });
        }
        if (event.text.length > 0) out += this.delta({ type: 'thinking_delta', thinking: event.text });
        return out;
      }
      case 'reasoning_signature': {
        let out = this.start() + this.writeHeld();
        if (!(this.open?.kind === 'thinking' && this.open.part === event.part)) {
          // A signature for a block with no text (or one already closed) still gets a thinking block to sit in.
          out += this.close() + this.openBlock({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking', part: event.part });
        }
        return out + this.delta({ type: 'signature_delta', signature: event.signature }) + this.close();
      }
      case 'reasoning_redacted':
        return this.start() + this.writeHeld() + this.close() + this.openBlock({ type: 'redacted_thinking', data: event.data }, { kind: 'thinking', part: event.part }) + this.close();
      case 'logprobs':
        return ''; // the Messages API has no log probabilities; routing refused the request if they were asked for
      case 'tool_call':
        return this.start() + (this.holdToolCalls ? this.holdToolCall(event) : this.toolCallPiece(event));
      case 'finish':
        this.stopReason = event.stopReason;
        this.stopSequence = event.stopReason === 'stop' ? event.stopSequence : undefined;
        return this.start() + this.writeHeld() + this.close();
    }
  }

  promptCounted(usage: PromptUsage): void {
    if (!this.started) this.prompt = usage;
  }

  upstreamToolArguments(kind: 'object' | 'text'): void {
    this.holdToolCalls = kind !== 'object';
  }

  finish(usage: TokenUsage): string {
    const delta = { stop_reason: stopReasonToAnthropic(this.stopReason ?? 'stop', this.stopSequence), stop_sequence: this.stopSequence ?? null };
    return (
      this.start() +
      this.writeHeld() +
      this.close() +
      frame('message_delta', { type: 'message_delta', delta, usage: usageToAnthropic(usage) }) +
      frame('message_stop', { type: 'message_stop' })
    );
  }

  error(error: GatewayError): string {
    return frame('error', anthropicErrorBody(error));
  }

  /** A piece of a call from a provider whose arguments assemble to an object: written as it comes, in the call's own block. */
  private toolCallPiece(event: Extract<RelayedStreamEvent, { type: 'tool_call' }>): string {
    const known = this.toolBlocks.get(event.index);
    if (known === undefined) {
      const id = event.id !== null ? clientToolCallId(event.id, event.signature) : `toolu_${this.identity.id.replace(/^msg_/, '')}_${event.index}`;
      let out = this.close() + this.openBlock({ type: 'tool_use', id, name: event.name ?? '', input: {} }, { kind: 'tool' });
      this.toolBlocks.set(event.index, this.open!.index);
      if (event.arguments.length > 0) out += this.delta({ type: 'input_json_delta', partial_json: event.arguments });
      return out;
    }
    if (event.arguments.length === 0) return '';
    // These providers send one call after another; a piece for an earlier block would be a provider fault.
    if (this.open?.index !== known) throw new ProviderError('malformed_response', `the provider continued tool call ${event.index} after another block had started`);
    return this.delta({ type: 'input_json_delta', partial_json: event.arguments });
  }

  /** Keeps a piece of a tool call until the call is complete; writes nothing. */
  private holdToolCall(event: Extract<RelayedStreamEvent, { type: 'tool_call' }>): string {
    if (this.written.has(event.index)) {
      throw new ProviderError('malformed_response', `the provider continued tool call ${event.index} after other output had followed it`);
    }
    this.heldChars += event.arguments.length;
    if (this.heldChars > MAX_HELD_TOOL_ARGUMENT_CHARS) {
      throw new ProviderError('malformed_response', `the provider's tool call arguments exceeded ${MAX_HELD_TOOL_ARGUMENT_CHARS} characters`);
    }
    const call = this.held.get(event.index);
    if (!call) {
      this.held.set(event.index, { toolIndex: event.index, id: event.id, name: event.name, signature: event.signature, arguments: event.arguments });
      return '';
    }
    if (call.id === null && event.id !== null) call.id = event.id;
    if (call.name === null && event.name !== null) call.name = event.name;
    if (call.signature === undefined && event.signature !== undefined) call.signature = event.signature;
    call.arguments += event.arguments;
    return '';
  }

  /** Writes every held call as a complete tool_use block, in the order the calls opened. */
  private writeHeld(): string {
    if (this.held.size === 0) return '';
    let out = this.close();
    for (const call of this.held.values()) {
      const id = call.id !== null ? clientToolCallId(call.id, call.signature) : `toolu_${this.identity.id.replace(/^msg_/, '')}_${call.toolIndex}`;
      out += this.openBlock({ type: 'tool_use', id, name: call.name ?? '', input: {} }, { kind: 'tool' });
      const input = call.arguments.trim() === '' ? null : JSON.stringify(toolInputForClient(call.arguments));
      if (input !== null) out += this.delta({ type: 'input_json_delta', partial_json: input });
      out += this.close();
      this.written.add(call.toolIndex);
    }
    this.held.clear();
    this.heldChars = 0;
    return out;
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
