import type { TokenUsage } from '../../../../events/index.js';
import type { ChatRequest, ChatResponse } from '../../../canonical/index.js';
import type { ResponseIdentity } from '../client-format.js';
import { type OutputItem, functionCallItem, incompleteReason, messageItemId, outputText, responseObject } from './responses-object.js';

/**
 * Canonical response → a Responses `response` object: the text as one `message` item with an
 * `output_text` part, then one `function_call` item per call (one choice: the Responses API has no
 * `n`). An answer cut short by the output cap or a content filter is `incomplete`, with the reason.
 */
export function toResponsesObject(response: ChatResponse, identity: ResponseIdentity, usage: TokenUsage, request: ChatRequest): Record<string, unknown> {
  const choice = response.choices[0];
  const incomplete = incompleteReason(choice?.stopReason ?? 'stop');
  const itemStatus = incomplete ? 'incomplete' : 'completed';
  const output: OutputItem[] = [];
  const calls = choice?.toolCalls ?? [];
  if (choice?.text || calls.length === 0) {
    output.push({ type: 'message', id: messageItemId(identity, 0), status: itemStatus, role: 'assistant', content: [outputText(choice?.text ?? '')] });
  }
  for (const call of calls) output.push(functionCallItem(identity, output.length, call, itemStatus));
  return responseObject(identity, request, { status: incomplete ? 'incomplete' : 'completed', output, usage, incomplete, error: null });
}
