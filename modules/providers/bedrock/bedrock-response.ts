import { type ChatChoice, type ChatResponse, ProviderError, type ReasoningPart, type ToolCall } from '../../canonical/index.js';
import { matchedStopSequenceFromConverse, stopReasonFromConverse, usageFromConverse } from './bedrock-usage.js';
import type { ConverseResponse } from './bedrock-wire.js';

/**
 * Converse JSON → canonical response (one choice). Text blocks are joined; toolUse blocks become tool
 * calls with their input re-serialised as the JSON argument string; reasoningContent blocks become
 * reasoning parts (signature kept, redacted content as opaque data).
 */
export function fromConverseResponse(body: unknown, providerRequestId: string | null): ChatResponse {
  const response = body as ConverseResponse;
  const content = response?.output?.message?.content;
  if (!response || typeof response !== 'object' || !Array.isArray(content)) {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not a Converse response');
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const block of content) {
    if (typeof block?.text === 'string') text += block.text;
    else if (block?.reasoningContent) {
      const { reasoningText, redactedContent } = block.reasoningContent;
      if (reasoningText && typeof reasoningText.text === 'string') {
        reasoning.push({ type: 'thinking', text: reasoningText.text, signature: typeof reasoningText.signature === 'string' ? reasoningText.signature : null });
      } else if (typeof redactedContent === 'string') reasoning.push({ type: 'redacted_thinking', data: redactedContent });
    }
    else if (block?.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      if (typeof toolUseId !== 'string' || typeof name !== 'string') {
        throw new ProviderError('malformed_response', 'the provider returned a toolUse block without id or name');
      }
      toolCalls.push({ id: toolUseId, name, arguments: JSON.stringify(input ?? {}) });
    }
  }
  const choice: ChatChoice = { index: 0, text, toolCalls, stopReason: stopReasonFromConverse(response.stopReason), reasoning, logprobs: null };
  const stopSequence = matchedStopSequenceFromConverse(response.stopReason, response.additionalModelResponseFields);
  if (stopSequence !== undefined) choice.stopSequence = stopSequence;
  return {
    providerRequestId,
    choices: [choice],
    usage: response.usage ? usageFromConverse(response.usage) : null,
  };
}
