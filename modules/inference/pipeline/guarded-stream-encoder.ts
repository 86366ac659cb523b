import type { TokenUsage } from '../../../events/index.js';
import type { GatewayError, PromptUsage, RelayedStreamEvent } from '../../canonical/index.js';
import { ContentPolicyViolation, type StreamContentGuard, type TextChannel } from '../../content-safety/index.js';
import type { ClientStreamEncoder } from '../formats/client-stream-encoder.js';
import { GatewayFault } from './gateway-fault.js';
import { contentPolicyError } from './content-policy-refusal.js';

/**
 * A client stream encoder that passes a streamed answer through the request's content policy before the client's
 * own encoder sees it: placeholders recovered exactly and output findings masked, each text channel (a choice's
 * text, each tool call's arguments, each reasoning block) through its own bounded holdback, so that a placeholder
 * or a finding split across provider events — anywhere, one character per event included — is still seen whole.
 *
 * A channel's held-back tail is released when the channel can no longer grow: before its choice's finish, and
 * before an error frame. An output `block` ends the stream: the encoder throws a GatewayFault carrying the
 * client's `content_policy_violation`, which the stream relay turns into an error event after the bytes already
 * sent (never retracted), cancels the upstream call and settles what was produced.
 */
export class GuardedStreamEncoder implements ClientStreamEncoder {
  private readonly channels = new Map<string, { channel: TextChannel; event: RelayedStreamEvent }>();
  /** The clean text a blocked channel released before its finding: it goes out just before the error frame. */
  private beforeBlock = '';

  constructor(
    private readonly inner: ClientStreamEncoder,
    private readonly guard: StreamContentGuard,
    /** Sees each event as released to the client (the content log of an opted-in tenant). */
    private readonly onReleased?: (event: RelayedStreamEvent) => void,
  ) {}

  get contentType(): string {
    return this.inner.contentType;
  }

  encode(event: RelayedStreamEvent): string {
    try {
      switch (event.type) {
        case 'text':
          return this.flushOthers(event.choice, `t${event.choice}`) + this.through(`t${event.choice}`, 'text', event, event.text);
        case 'reasoning':
          return this.flushOthers(event.choice, `r${event.choice}:${event.part}`) + this.through(`r${event.choice}:${event.part}`, 'reasoning', event, event.text);
        case 'tool_call':
          return this.flushOthers(event.choice, `c${event.choice}:${event.index}`) + this.toolCall(event);
        case 'finish':
          return this.flushChoice(event.choice) + this.release(event);
        default:
          return this.flushOthers(event.choice, null) + this.release(event);
      }
    } catch (error) {
      if (!(error instanceof ContentPolicyViolation)) throw error;
      throw new GatewayFault(contentPolicyError(error), error);
    }
  }

  promptCounted(usage: PromptUsage): void {
    this.inner.promptCounted?.(usage);
  }

  upstreamToolArguments(kind: 'object' | 'text'): void {
    this.inner.upstreamToolArguments?.(kind);
  }

  finish(usage: TokenUsage): string {
    return this.inner.finish(usage);
  }

  error(error: GatewayError): string {
    // What a channel still holds is released before the error (no finding can complete any more); a block has
    // released its clean text already (beforeBlock), and nothing after it goes out.
    let frames = '';
    if (error.code !== 'content_policy_violation') {
      try {
        for (const choice of new Set([...this.channels.values()].map(({ event }) => event.choice))) frames += this.flushChoice(choice);
      } catch (violation) {
        if (!(violation instanceof ContentPolicyViolation)) throw violation;
      }
    }
    frames += this.beforeBlock;
    this.beforeBlock = '';
    return frames + this.inner.error(error);
  }

  private through(key: string, kind: 'text' | 'reasoning' | 'tool_arguments', event: RelayedStreamEvent, text: string): string {
    let open = this.channels.get(key);
    if (!open) {
      open = { channel: this.guard.channel(kind), event };
      this.channels.set(key, open);
    }
    const channel = open.channel;
    const released = this.pull(open.event, () => channel.push(text));
    return released.length > 0 ? this.release(withText(event, released)) : '';
  }

  private toolCall(event: Extract<RelayedStreamEvent, { type: 'tool_call' }>): string {
    const key = `c${event.choice}:${event.index}`;
    // The event that opens a call (its id and name) goes out at once, with whatever arguments can be released.
    if (event.id !== null || event.name !== null) {
      let open = this.channels.get(key);
      if (!open) {
        open = { channel: this.guard.channel('tool_arguments'), event: { type: 'tool_call', choice: event.choice, index: event.index, id: null, name: null, arguments: '' } };
        this.channels.set(key, open);
      }
      const channel = open.channel;
      const opening: Extract<RelayedStreamEvent, { type: 'tool_call' }> = { type: 'tool_call', choice: event.choice, index: event.index, id: event.id, name: event.name, arguments: this.pull(open.event, () => channel.push(event.arguments)) };
      // The provider's thought signature rides on the event that opens the call.
      if (event.signature !== undefined) opening.signature = event.signature;
      return this.release(opening);
    }
    return this.through(key, 'tool_arguments', event, event.arguments);
  }

  /**
   * Releases the channels of `choice` that an event of another channel follows, so the client's encoder sees the
   * answer in the order it was produced (a text block's tail before the tool call that follows it). Tool calls
   * streamed in parallel (their argument deltas interleaved) keep their holdbacks: each goes on growing.
   */
  private flushOthers(choice: number, key: string | null): string {
    let frames = '';
    const parallel = key !== null && key.startsWith('c');
    for (const [other, open] of this.channels) {
      if (other === key || open.event.choice !== choice || (parallel && other.startsWith('c'))) continue;
      this.channels.delete(other);
      const rest = this.pull(open.event, () => open.channel.end());
      if (rest.length > 0) frames += this.release(withText(open.event, rest));
    }
    return frames;
  }

  /** Releases what every channel of `choice` holds, in the order the channels opened. */
  private flushChoice(choice: number): string {
    let frames = '';
    for (const [key, open] of this.channels) {
      if (open.event.choice !== choice) continue;
      this.channels.delete(key);
      const rest = this.pull(open.event, () => open.channel.end());
      if (rest.length > 0) frames += this.release(withText(open.event, rest));
    }
    return frames;
  }

  /**
   * Runs a channel step; a block found in it keeps the clean text the channel released before the finding (as its
   * own channel's event), to go out just before the error frame.
   */
  private pull(event: RelayedStreamEvent, step: () => string): string {
    try {
      return step();
    } catch (error) {
      if (error instanceof ContentPolicyViolation && error.released.length > 0) this.beforeBlock = this.release(withText(event, error.released));
      throw error;
    }
  }

  private release(event: RelayedStreamEvent): string {
    this.onReleased?.(event);
    return this.inner.encode(event);
  }
}

/** The event of a channel carrying `text` instead of what the provider sent. */
function withText(event: RelayedStreamEvent, text: string): RelayedStreamEvent {
  switch (event.type) {
    case 'text':
      return { type: 'text', choice: event.choice, text };
    case 'reasoning':
      return { type: 'reasoning', choice: event.choice, part: event.part, text };
    case 'tool_call':
      return { type: 'tool_call', choice: event.choice, index: event.index, id: null, name: null, arguments: text };
    default:
      return event;
  }
}
