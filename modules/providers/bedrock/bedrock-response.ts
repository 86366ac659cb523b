import { type ChatResponse, ProviderError, type ToolCall } from '../../canonical/index.js';
import { stopReasonFromConverse, usageFromConverse } from './bedrock-usage.js';
import type { ConverseResponse } from './bedrock-wire.js';

/**
 * Converse JSON → canonical response (one choice). Text blocks are joined; toolUse blocks become tool
 * calls with their input re-serialised as the JSON argument string; reasoning blocks are not relayed.
 */
export function fromConverseResponse(body: unknown, providerRequestId: string | null): ChatResponse {
  const response = body as ConverseResponse;
  const content = response?.output?.message?.content;
  if (!response || typeof response !== 'object' || !Array.isArray(content)) {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not a Converse response');
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (typeof block?.text === 'string') text += block.text;
    else if (block?.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      if (typeof toolUseId !== 'string' || typeof name !== 'string') {
        throw new ProviderError('malformed_response', 'the provider returned a toolUse block without id or name');
      }
      toolCalls.push({ id: toolUseId, name, arguments: JSON.stringify(input ?? {}) });
    }
  }
  return {
    providerRequestId,
    choices: [{ index: 0, text, toolCalls, stopReason: stopReasonFromConverse(response.stopReason) }],
    usage: response.usage ? usageFromConverse(response.usage) : null,
  };
}
