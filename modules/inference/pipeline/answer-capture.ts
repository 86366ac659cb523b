import type { TokenUsage } from '../../../events/index.js';
import type { ChatChoice, ChatResponse, PromptUsage, ReasoningPart, RelayedStreamEvent, StopReason, TokenLogprob } from '../../canonical/index.js';
import type { ToolCall } from '../../canonical/index.js';
import type { GatewayError } from '../../canonical/index.js';
import type { ClientStreamEncoder } from '../formats/client-stream-encoder.js';

interface ChoiceSoFar {
  text: string;
  toolCalls: Map<number, ToolCall>;
  stopReason: StopReason | null;
  stopSequence?: string;
  /** Reasoning blocks by their part number, so a replay returns them (and their signatures) as streamed. */
  reasoning: Map<number, ReasoningPart>;
  logprobs: TokenLogprob[] | null;
}

/**
 * A client stream encoder that also keeps what it encoded, so a streamed answer can be stored (exact
 * cache, idempotent outcome) exactly as the client received it. It stops keeping once the answer grows
 * past `maxChars`: such an answer is not stored, and the stream itself is unaffected.
 */
export class AnswerCapture implements ClientStreamEncoder {
  private readonly choices = new Map<number, ChoiceSoFar>();
  private kept = 0;
  private overflowed = false;

  constructor(
    private readonly inner: ClientStreamEncoder,
    private readonly maxChars: number,
  ) {}

  get contentType(): string {
    return this.inner.contentType;
  }

  encode(event: RelayedStreamEvent): string {
    this.keep(event);
    return this.inner.encode(event);
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
    return this.inner.error(error);
  }

  /** The answer as the client received it, or null when it was too large to keep or did not finish every choice. */
  response(providerRequestId: string | null): ChatResponse | null {
    if (this.overflowed || this.choices.size === 0) return null;
    const choices: ChatChoice[] = [];
    for (const [index, choice] of [...this.choices].sort(([a], [b]) => a - b)) {
      if (choice.stopReason === null) return null;
      const toolCalls = [...choice.toolCalls].sort(([a], [b]) => a - b).map(([, call]) => call);
      const reasoning = [...choice.reasoning].sort(([a], [b]) => a - b).map(([, part]) => part);
      const kept: ChatChoice = { index, text: choice.text, toolCalls, stopReason: choice.stopReason, reasoning, logprobs: choice.logprobs };
      if (choice.stopSequence !== undefined) kept.stopSequence = choice.stopSequence;
      choices.push(kept);
    }
    return { providerRequestId, choices, usage: null };
  }

  private keep(event: RelayedStreamEvent): void {
    if (this.overflowed) return;
    const choice: ChoiceSoFar = this.choices.get(event.choice) ?? { text: '', toolCalls: new Map(), stopReason: null, reasoning: new Map(), logprobs: null };
    this.choices.set(event.choice, choice);
    switch (event.type) {
      case 'text':
        choice.text += event.text;
        this.kept += event.text.length;
        break;
      case 'tool_call': {
        const call = choice.toolCalls.get(event.index) ?? { id: '', name: '', arguments: '' };
        if (event.id !== null) call.id = event.id;
        if (event.name !== null) call.name = event.name;
        if (event.signature !== undefined) {
          call.signature = event.signature;
          this.kept += event.signature.length;
        }
        call.arguments += event.arguments;
        choice.toolCalls.set(event.index, call);
        this.kept += event.arguments.length + (event.name?.length ?? 0);
        break;
      }
      case 'reasoning': {
        const part = choice.reasoning.get(event.part);
        const text = part?.type === 'thinking' ? part.text + event.text : event.text;
        choice.reasoning.set(event.part, { type: 'thinking', text, signature: part?.type === 'thinking' ? part.signature : null });
        this.kept += event.text.length;
        break;
      }
      case 'reasoning_signature': {
        const part = choice.reasoning.get(event.part);
        choice.reasoning.set(event.part, { type: 'thinking', text: part?.type === 'thinking' ? part.text : '', signature: event.signature });
        this.kept += event.signature.length;
        break;
      }
      case 'reasoning_redacted':
        choice.reasoning.set(event.part, { type: 'redacted_thinking', data: event.data });
        this.kept += event.data.length;
        break;
      case 'logprobs':
        choice.logprobs = [...(choice.logprobs ?? []), ...event.content];
        this.kept += event.content.length * 16;
        break;
      case 'finish':
        choice.stopReason = event.stopReason;
        if (event.stopSequence !== undefined) choice.stopSequence = event.stopSequence;
        break;
    }
    if (this.kept > this.maxChars) {
      this.overflowed = true;
      this.choices.clear();
    }
  }
}
