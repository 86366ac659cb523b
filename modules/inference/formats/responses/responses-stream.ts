import type { TokenUsage } from '../../../../events/index.js';
import { type ChatRequest, clientToolCallId, type GatewayError, type RelayedStreamEvent, type StopReason } from '../../../canonical/index.js';
import type { ClientStreamEncoder } from '../client-stream-encoder.js';
import type { ResponseIdentity } from '../client-format.js';
import {
  type FunctionCallItem, type MessageItem, type OutputItem, type ResponseState, functionCallItemId, incompleteReason, messageItemId, outputText,
  responseObject,
} from './responses-object.js';

/**
 * Canonical stream events → the Responses API's semantic event sequence, each event numbered by
 * `sequence_number`:
 *
 *   response.created → response.in_progress
 *   per text item:  output_item.added → content_part.added → output_text.delta… → output_text.done → content_part.done → output_item.done
 *   per call item:  output_item.added → function_call_arguments.delta… → function_call_arguments.done → output_item.done
 *   response.completed (or response.incomplete when the output cap cut it short), with usage
 *
 * A text item closes when another item starts; call items stay open until text starts or the answer
 * finishes, so a provider that interleaves the pieces of parallel calls still lands each in its item.
 * The closing `response.*` event is written only by `finish`, after the request's events are
 * committed, so it carries the settled usage. A failure after output started writes `error` and then
 * `response.failed`.
 */
export class ResponsesStreamEncoder implements ClientStreamEncoder {
  readonly contentType = 'text/event-stream; charset=utf-8';
  private sequence = 0;
  private started = false;
  private readonly output: OutputItem[] = [];
  /** Output index of the text item being written, if one is open. */
  private openText: number | null = null;
  /** Canonical tool-call index → output index, for calls whose item is still open. */
  private readonly openCalls = new Map<number, number>();
  /** Canonical tool-call index → output index, for every call seen (late pieces of a closed call). */
  private readonly calls = new Map<number, number>();
  private stopReason: StopReason | null = null;

  constructor(
    private readonly identity: ResponseIdentity,
    private readonly request: ChatRequest,
  ) {}

  encode(event: RelayedStreamEvent): string {
    switch (event.type) {
      case 'text':
        return this.start() + this.text(event.text);
      case 'tool_call':
        return this.start() + this.toolCall(event);
      case 'finish':
        this.stopReason = event.stopReason;
        return this.start() + this.closeAll();
      // Reasoning text is shown only as a summary, which is not produced yet (reasoning.summary is refused);
      // its tokens are in usage (the settled usage goes into the closing response event). Logprobs cannot
      // be asked for in this format.
      case 'reasoning':
      case 'reasoning_signature':
      case 'reasoning_redacted':
      case 'logprobs':
        return '';
    }
  }

  finish(usage: TokenUsage): string {
    const incomplete = incompleteReason(this.stopReason ?? 'stop');
    const out = this.start() + this.closeAll();
    const state: ResponseState = { status: incomplete ? 'incomplete' : 'completed', output: this.output, usage, incomplete, error: null };
    return out + this.frame(incomplete ? 'response.incomplete' : 'response.completed', { response: responseObject(this.identity, this.request, state) });
  }

  error(error: GatewayError): string {
    const failure = { code: error.code, message: error.message };
    const state: ResponseState = { status: 'failed', output: this.output, usage: null, incomplete: null, error: failure };
    return (
      this.start() +
      this.frame('error', { code: error.code, message: error.message, param: error.param }) +
      this.frame('response.failed', { response: responseObject(this.identity, this.request, state) })
    );
  }

  private text(text: string): string {
    let out = '';
    // An empty piece (some providers open with one) starts no item: an answer without text has no message.
    if (this.openText === null && text.length === 0) return out;
    if (this.openText === null) out += this.closeCalls() + this.openTextItem();
    if (text.length === 0) return out;
    const item = this.output[this.openText!] as MessageItem;
    item.content[0].text += text;
    return out + this.frame('response.output_text.delta', { item_id: item.id, output_index: this.openText, content_index: 0, delta: text, logprobs: [] });
  }

  private toolCall(event: Extract<RelayedStreamEvent, { type: 'tool_call' }>): string {
    let out = '';
    let index = this.calls.get(event.index);
    if (index === undefined) {
      out += this.closeText();
      index = this.output.length;
      const callId = event.id !== null ? clientToolCallId(event.id, event.signature) : `call_${this.identity.id.replace(/^resp_/, '')}_${event.index}`;
      const item: FunctionCallItem = { type: 'function_call', id: functionCallItemId(this.identity, index), call_id: callId, name: event.name ?? '', arguments: '', status: 'in_progress' };
      this.output.push(item);
      this.calls.set(event.index, index);
      this.openCalls.set(event.index, index);
      out += this.frame('response.output_item.added', { output_index: index, item: { ...item } });
    }
    if (event.arguments.length === 0) return out;
    const item = this.output[index] as FunctionCallItem;
    item.arguments += event.arguments;
    return out + this.frame('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: event.arguments });
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const state: ResponseState = { status: 'in_progress', output: [], usage: null, incomplete: null, error: null };
    const response = responseObject(this.identity, this.request, state);
    return this.frame('response.created', { response }) + this.frame('response.in_progress', { response });
  }

  /** Closes every open item; an answer that produced nothing still gets its (empty) message, as a buffered one does. */
  private closeAll(): string {
    const empty = this.output.length === 0 ? this.openTextItem() : '';
    return empty + this.closeText() + this.closeCalls();
  }

  private openTextItem(): string {
    const index = this.output.length;
    const item: MessageItem = { type: 'message', id: messageItemId(this.identity, index), status: 'in_progress', role: 'assistant', content: [] };
    this.output.push(item);
    this.openText = index;
    item.content.push(outputText(''));
    return (
      // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
      this.frame('response.output_item.added', { output_index: index, item: { ...item, content: [] } }) +
      this.frame('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: outputText('') })
    );
  }

  private closeText(): string {
    if (this.openText === null) return '';
    const index = this.openText;
    this.openText = null;
    const item = this.output[index] as MessageItem;
    item.status = this.itemStatus();
    const part = item.content[0];
    return (
      this.frame('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] }) +
      this.frame('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part }) +
      this.frame('response.output_item.done', { output_index: index, item })
    );
  }

  private closeCalls(): string {
    let out = '';
    for (const index of [...this.openCalls.values()].sort((a, b) => a - b)) {
      const item = this.output[index] as FunctionCallItem;
      item.status = this.itemStatus();
      out += this.frame('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments });
      out += this.frame('response.output_item.done', { output_index: index, item });
    }
    this.openCalls.clear();
    return out;
  }

  private itemStatus(): 'completed' | 'incomplete' {
    return this.stopReason !== null && incompleteReason(this.stopReason) ? 'incomplete' : 'completed';
  }

  private frame(type: string, payload: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`;
  }
}
