import { ProviderError, type StreamEvent } from '../../canonical/index.js';
import { providerText } from '../upstream-errors.js';
import { bedrockStreamException } from './bedrock-errors.js';
import type { EventStreamFrame } from './bedrock-event-stream.js';
import { matchedStopSequenceFromConverse, stopReasonFromConverse, usageFromConverse } from './bedrock-usage.js';
import type { ConverseStreamPayloads } from './bedrock-wire.js';

/**
 * Where a ConverseStream is: before `messageStart`; inside the message (content blocks open and close);
 * after `messageStop` (the stop reason is known; `metadata` with usage follows); done after `metadata`.
 */
type Phase = 'before-message' | 'in-message' | 'stopped' | 'done';

/**
 * ConverseStream frames → canonical stream events, as a small state machine. Tool-use blocks get
 * consecutive tool-call indexes (Bedrock numbers every content block, text included); their input
 * arrives as JSON string pieces. Exception frames inside the 200 stream become a ProviderError, never a
 * clean stop; a frame out of order or not JSON is a malformed response. Unknown event types are skipped.
 */
export class ConverseStreamTranslator {
  private phase: Phase = 'before-message';
  /** contentBlockIndex → tool-call index, for tool-use blocks. */
  private readonly toolBlocks = new Map<number, number>();
  /** contentBlockIndex → reasoning part, for reasoning blocks. */
  private readonly reasoningBlocks = new Map<number, number>();

  get done(): boolean {
    return this.phase === 'done';
  }

  translate(frame: EventStreamFrame): StreamEvent[] {
    if (frame.messageType === 'exception') throw bedrockStreamException(frame.exceptionType ?? 'unknownException', frame.body);
    if (frame.messageType === 'error') {
      const detail = [frame.errorCode, frame.errorMessage].filter(Boolean).join(': ') || 'unknown error';
      throw new ProviderError('transient', 'the provider reported an error inside the stream', null, null, { providerMessage: providerText(detail) });
    }
    if (frame.messageType !== 'event') return [];
    switch (frame.eventType) {
      case 'messageStart':
        if (this.phase !== 'before-message') throw outOfOrder('messageStart');
        this.payload<'messageStart'>(frame);
        this.phase = 'in-message';
        return [];
      case 'contentBlockStart': {
        this.expect('in-message', 'contentBlockStart');
        const { contentBlockIndex, start } = this.payload<'contentBlockStart'>(frame);
        if (!start?.toolUse) return [];
        if (typeof start.toolUse.toolUseId !== 'string' || typeof start.toolUse.name !== 'string') {
          throw new ProviderError('malformed_response', 'the provider started a toolUse block without id or name');
        }
        const index = this.toolBlocks.size;
        this.toolBlocks.set(contentBlockIndex, index);
        return [{ type: 'tool_call', choice: 0, index, id: start.toolUse.toolUseId, name: start.toolUse.name, arguments: '' }];
      }
      case 'contentBlockDelta': {
        this.expect('in-message', 'contentBlockDelta');
        const { contentBlockIndex, delta } = this.payload<'contentBlockDelta'>(frame);
        if (typeof delta?.text === 'string') return delta.text.length ? [{ type: 'text', choice: 0, text: delta.text }] : [];
        if (delta?.toolUse) {
          const index = this.toolBlocks.get(contentBlockIndex);
          if (index === undefined) throw new ProviderError('malformed_response', 'the provider sent toolUse input for a block it never started');
          const input = typeof delta.toolUse.input === 'string' ? delta.toolUse.input : '';
          return input.length ? [{ type: 'tool_call', choice: 0, index, id: null, name: null, arguments: input }] : [];
        }
        if (delta?.reasoningContent) return this.reasoning(contentBlockIndex, delta.reasoningContent);
        return []; // other delta kinds are not relayed
      }
      case 'contentBlockStop':
        this.expect('in-message', 'contentBlockStop');
        return [];
      case 'messageStop': {
        this.expect('in-message', 'messageStop');
        const { stopReason, additionalModelResponseFields } = this.payload<'messageStop'>(frame);
        this.phase = 'stopped';
        const finish: StreamEvent = { type: 'finish', choice: 0, stopReason: stopReasonFromConverse(stopReason) };
        const stopSequence = matchedStopSequenceFromConverse(stopReason, additionalModelResponseFields);
        if (stopSequence !== undefined) finish.stopSequence = stopSequence;
        return [finish];
      }
      case 'metadata': {
        if (this.phase === 'before-message' || this.phase === 'done') throw outOfOrder('metadata');
        const { usage } = this.payload<'metadata'>(frame);
        this.phase = 'done';
        return usage ? [{ type: 'usage', usage: usageFromConverse(usage) }] : [];
      }
      default:
        return [];
    }
  }

  /** Claude thinking on Bedrock: text pieces, then the signature; or one redacted piece. */
  private reasoning(block: number, delta: NonNullable<ConverseStreamPayloads['contentBlockDelta']['delta']['reasoningContent']>): StreamEvent[] {
    let part = this.reasoningBlocks.get(block);
    if (part === undefined) {
      part = this.reasoningBlocks.size;
      this.reasoningBlocks.set(block, part);
    }
    if (typeof delta.text === 'string') return delta.text.length ? [{ type: 'reasoning', choice: 0, part, text: delta.text }] : [];
    if (typeof delta.signature === 'string') return [{ type: 'reasoning_signature', choice: 0, part, signature: delta.signature }];
    if (typeof delta.redactedContent === 'string') return [{ type: 'reasoning_redacted', choice: 0, part, data: delta.redactedContent }];
    return [];
  }

  private expect(phase: Phase, event: string): void {
    if (this.phase !== phase) throw outOfOrder(event);
  }

  private payload<K extends keyof ConverseStreamPayloads>(frame: EventStreamFrame): ConverseStreamPayloads[K] {
    try {
      const value: unknown = JSON.parse(frame.body);
      if (typeof value === 'object' && value !== null) return value as ConverseStreamPayloads[K];
    } catch {
      // fall through
    }
    throw new ProviderError('malformed_response', `the provider sent a ${frame.eventType} event whose payload is not a JSON object`);
  }
}

function outOfOrder(event: string): ProviderError {
  return new ProviderError('malformed_response', `the provider sent ${event} out of order`);
}
